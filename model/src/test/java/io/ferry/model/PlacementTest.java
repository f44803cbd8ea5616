package io.ferry.model;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PlacementTest {
    @Test
    void blockGivesTheFirstNodesOneMoreWhenRanksDoNotDivide() {
        Placement p = Placement.block(10, List.of("a", "b", "c"));
        assertEquals("0-3", p.ranksOn("a").toString());
        assertEquals("4-6", p.ranksOn("b").toString());
        assertEquals("7-9", p.ranksOn("c").toString());
        for (int r = 0; r < 10; r++) {
            assertTrue(p.ranksOn(p.nodeOf(r)).contains(r), "rank " + r);
        }
        assertEquals(p, Placement.parse(p.toString(), 10));
    }

    @Test
    void cyclicDealsRanksRoundTheNodes() {
        Placement p = Placement.cyclic(7, List.of("a", "b", "c"));
        assertEquals("0,3,6", p.ranksOn("a").toString());
        assertEquals("b", p.nodeOf(4));
        assertEquals(p, Placement.parse("cyclic:a,b,c", 7));
    }

    @Test
    void aMapMustCoverEveryRankOnce() {
        Placement p = Placement.map("0-3:a,4-7:b,8:a", 9);
        assertEquals("0-3,8", p.ranksOn("a").toString());
        assertEquals("map:0-3:a,8:a,4-7:b", p.toString());
        assertEquals(p, Placement.parse(p.toString(), 9));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Placement.map("0-3:a,3-7:b", 8))
                .getMessage().contains("rank 3 twice"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Placement.map("0-3:a", 8))
                .getMessage().contains("rank 4 has no node"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Placement.map("0-3:../x", 4))
                .getMessage().contains("unsafe node name"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Placement.map("0-x:a", 4))
                .getMessage().contains("bad rank range '0-x'"));
    }

    @Test
    void movingALostNodeKeepsEveryOtherRankWhereItWas() {
        Placement p = Placement.block(6, List.of("a", "b", "c")).moving("b", "c");
        assertEquals(List.of("a", "c"), p.nodes());
        assertEquals("0-1", p.ranksOn("a").toString());
        assertEquals("2-5", p.ranksOn("c").toString());
        assertEquals("", p.ranksOn("b").toString());
    }

    @Test
    void aLauncherPlacementLearnsItsNodesAsRanksJoin() {
        Placement p = Placement.launcher(6);
        assertTrue(p.byLauncher());
        assertFalse(p.complete());
        assertEquals(List.of(), p.nodes());
        assertEquals("launcher:", p.toString());
        p = p.joining("h1", RankSet.parse("2-3")).joining("h0", RankSet.parse("0-1"));
        assertEquals("launcher:2-3:h1,0-1:h0", p.toString());
        assertEquals(p, Placement.parse(p.toString(), 6));
        assertFalse(p.complete());
        assertThrows(IllegalArgumentException.class, () -> Placement.launcher(6).nodeOf(4));
        // a rank registering again on another node (a relaunch) moves there
        p = p.joining("h2", RankSet.parse("3-5"));
        assertTrue(p.complete());
        assertEquals("2", p.ranksOn("h1").toString());
        assertEquals("h2", p.nodeOf(3));
        assertEquals(List.of("h1", "h0", "h2"), p.nodes());
        assertThrows(IllegalArgumentException.class, () -> Placement.launcher(6).joining("h0", RankSet.parse("6")));
        assertThrows(IllegalStateException.class, () -> Placement.single(2, "h0").joining("h1", RankSet.parse("1")));
    }

    @Test
    void badInputIsOneClearError() {
        assertThrows(IllegalArgumentException.class, () -> Placement.block(2, List.of("a", "b", "c")));
        assertThrows(IllegalArgumentException.class, () -> Placement.block(4, List.of("a", "a")));
        assertThrows(IllegalArgumentException.class, () -> Placement.parse("spread:a", 4));
        assertThrows(IllegalArgumentException.class, () -> RankSet.parse("3-1"));
        assertEquals("0-2,5", RankSet.parse("5,0-2").toString());
    }
}
