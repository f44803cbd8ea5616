package io.ferry.model;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PartnerRingTest {
    @Test
    void withoutDomainsEachNodeCopiesToTheNextInPlacementOrder() {
        assertEquals(Map.of("a", "b", "b", "c", "c", "a"), PartnerRing.pairs(List.of("a", "b", "c"), Map.of()));
        assertEquals(Map.of("a", "b", "b", "a"), PartnerRing.pairs(List.of("a", "b"), Map.of()));
        assertTrue(PartnerRing.pairs(List.of("a"), Map.of()).isEmpty(), "a node alone has no partner");
    }

    @Test
    void partnersSitInAnotherFailureDomainWheneverTheDomainsAllowIt() {
        // Two racks in placement order: a ring in that order would pair a1->a2 and b1->b2.
        Map<String, String> racks = PartnerRing.parseDomains("a1=r1,a2=r1,a3=r1,b1=r2,b2=r2,b3=r2");
        Map<String, String> pairs = PartnerRing.pairs(List.of("a1", "a2", "a3", "b1", "b2", "b3"), racks);
        assertEquals(6, pairs.size());
        assertEquals(List.of(), PartnerRing.sameDomain(pairs, racks), pairs.toString());
        assertEquals(6, new HashSet<>(pairs.values()).size(), "every node keeps exactly one partner copy");

        // Three of four nodes in one rack: some pair must stay inside it, and is named.
        Map<String, String> lopsided = PartnerRing.parseDomains("a1=r1,a2=r1,a3=r1,b1=r2");
        Map<String, String> p2 = PartnerRing.pairs(List.of("a1", "a2", "a3", "b1"), lopsided);
        assertEquals(4, new HashSet<>(p2.values()).size());
        assertTrue(!PartnerRing.sameDomain(p2, lopsided).isEmpty());
        p2.forEach((n, p) -> assertTrue(!n.equals(p), n + " is its own partner"));
    }

    @Test
    void domainFilesAndTextAreCheckedNamingTheBadLine() {
        assertEquals("n1=rackA,n2=rackB,n3=rackA", PartnerRing.domainsFromLines(List.of("# racks", "n1 rackA",
                "n2 slots=16 domain=rackB", "", "n3  rackA  # spare")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PartnerRing.domainsFromLines(List.of("n1 rackA", "n2 slots=4")));
        assertTrue(e.getMessage().contains("line 2"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PartnerRing.parseDomains("n1=a,n1=b"));
        assertThrows(IllegalArgumentException.class, () -> PartnerRing.parseDomains("../x=a"));
        assertThrows(IllegalArgumentException.class, () -> PartnerRing.parseDomains("n1=a b"));
    }
}
