package io.ferry.agent.capture.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The layout of one x86_64 ELF core file as the Linux kernel writes it (see
 * {@code docs/formats/proc-core.md}): ELF header, one PT_NOTE then one PT_LOAD per memory
 * region, the notes (NT_PRPSINFO, NT_AUXV, NT_FILE, then NT_PRSTATUS and NT_PRFPREG per
 * thread, main thread first), then the regions' bytes at page-aligned offsets. Regions that
 * are not copied keep {@code p_filesz = 0}. Little-endian throughout. Immutable.
 */
public final class ElfCore {
    public static final int PAGE = 4096;
    private static final int EHDR = 64;
    private static final int PHDR = 56;
    private static final int PT_LOAD = 1;
    private static final int PT_NOTE = 4;
    private static final int NT_PRPSINFO = 3;
    private static final int NT_AUXV = 6;
    private static final int NT_FILE = 0x46494c45; // "FILE"
    private static final int MAX_PHNUM = 0xfffe; // 0xffff (PN_XNUM) would need a section header

    /** What a core file records about its process besides memory and registers. */
    public record Process(ProcFs.Stat stat, int uid, int gid, String cmdline, byte[] auxv,
                          List<Registers.Thread> threads, List<ProcFs.Stat> threadStats, List<Long> threadSigBlocked) {}

    private final List<ProcFs.Region> regions;
    private final long[] offsets;
    private final byte[] head;
    private final long size;

    public ElfCore(List<ProcFs.Region> regions, Process p) {
        if (regions.size() + 1 > MAX_PHNUM) {
            throw new IllegalArgumentException("process " + p.stat().pid() + " has " + regions.size()
                    + " memory regions; an ELF core without section headers holds at most " + (MAX_PHNUM - 1));
        }
        this.regions = List.copyOf(regions);
        byte[] notes = notes(regions, p);
        long notesAt = EHDR + (long) PHDR * (regions.size() + 1);
        long at = align(notesAt + notes.length, PAGE);
        offsets = new long[regions.size()];
        for (int i = 0; i < regions.size(); i++) {
            offsets[i] = at;
            if (regions.get(i).copied()) {
                at += regions.get(i).size();
            }
        }
        size = at;
        ByteBuffer b = ByteBuffer.allocate((int) (notesAt + notes.length)).order(ByteOrder.LITTLE_ENDIAN);
        b.put(new byte[] {0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* LSB */, 1 /* version */, 0 /* SYSV */});
        b.put(new byte[8]);
        b.putShort((short) 4); // ET_CORE
        b.putShort((short) 62); // EM_X86_64
        b.putInt(1);
        b.putLong(0); // e_entry
        b.putLong(EHDR); // e_phoff
        b.putLong(0); // e_shoff
        b.putInt(0); // e_flags
        b.putShort((short) EHDR).putShort((short) PHDR).putShort((short) (regions.size() + 1));
        b.putShort((short) 0).putShort((short) 0).putShort((short) 0);
        phdr(b, PT_NOTE, 0, notesAt, 0, notes.length, 0, 4);
        for (int i = 0; i < regions.size(); i++) {
            ProcFs.Region r = regions.get(i);
            int flags = (r.perms().charAt(0) == 'r' ? 4 : 0) | (r.perms().charAt(1) == 'w' ? 2 : 0)
                    | (r.perms().charAt(2) == 'x' ? 1 : 0);
            phdr(b, PT_LOAD, flags, offsets[i], r.start(), r.copied() ? r.size() : 0, r.size(), PAGE);
        }
        b.put(notes);
        head = b.array();
    }

    /** Header, program headers and notes: the first bytes of the file. */
    public ByteBuffer head() {
        return ByteBuffer.wrap(head).asReadOnlyBuffer();
    }

    /** File offset of each region's bytes, in region order (a copy). */
    public long[] offsets() {
        return offsets.clone();
    }

    public List<ProcFs.Region> regions() {
        return regions;
    }

    /** Length of the whole file; the regions' zero pages are holes in it. */
    public long size() {
        return size;
    }

    private static void phdr(ByteBuffer b, int type, int flags, long offset, long vaddr, long filesz,
            long memsz, long align) {
        b.putInt(type).putInt(flags).putLong(offset).putLong(vaddr).putLong(0).putLong(filesz).putLong(memsz)
                .putLong(align);
    }

    private static long align(long v, long a) {
        return (v + a - 1) / a * a;
    }

    private static byte[] notes(List<ProcFs.Region> regions, Process p) {
        Notes n = new Notes();
        n.add(NT_PRPSINFO, prpsinfo(p));
        n.add(NT_AUXV, p.auxv());
        n.add(NT_FILE, fileNote(regions));
        for (int i = 0; i < p.threads().size(); i++) {
            Registers.Thread t = p.threads().get(i);
            n.add(Registers.NT_PRSTATUS, prstatus(p, t, p.threadStats().get(i), p.threadSigBlocked().get(i)));
            if (t.fp() != null) {
                n.add(Registers.NT_PRFPREG, t.fp());
            }
        }
        return n.bytes();
    }

    /** {@code struct elf_prpsinfo}, 136 bytes on x86_64. */
    private static byte[] prpsinfo(Process p) {
        ByteBuffer b = ByteBuffer.allocate(136).order(ByteOrder.LITTLE_ENDIAN);
        char s = p.stat().state();
        b.put((byte) "RSDTZW".indexOf(s)).put((byte) s).put((byte) (s == 'Z' ? 1 : 0)).put((byte) p.stat().nice());
        b.putInt(0);
        b.putLong(p.stat().flags());
        b.putInt(p.uid()).putInt(p.gid());
        b.putInt(p.stat().pid()).putInt(p.stat().ppid()).putInt(p.stat().pgrp()).putInt(p.stat().session());
        b.put(fixed(p.stat().comm(), 16));
        b.put(fixed(p.cmdline(), 80));
        return b.array();
    }

    /** {@code struct elf_prstatus}, 336 bytes on x86_64; the registers at offset 112. */
    private static byte[] prstatus(Process p, Registers.Thread t, ProcFs.Stat ts, long sigBlocked) {
        ByteBuffer b = ByteBuffer.allocate(336).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(Libc.SIGSTOP).putInt(0).putInt(0); // pr_info: what stopped it
        b.putShort((short) Libc.SIGSTOP).putShort((short) 0); // pr_cursig, padding
        b.putLong(0).putLong(sigBlocked); // pr_sigpend, pr_sighold
        b.putInt(t.tid()).putInt(p.stat().ppid()).putInt(p.stat().pgrp()).putInt(p.stat().session());
        timeval(b, ts.utimeTicks());
        timeval(b, ts.stimeTicks());
        timeval(b, 0);
        timeval(b, 0);
        b.put(t.general());
        b.putInt(t.fp() != null ? 1 : 0);
        return b.array();
    }

    /** Clock ticks (USER_HZ, 100 on Linux) as a {@code struct timeval}. */
    private static void timeval(ByteBuffer b, long ticks) {
        b.putLong(ticks / 100).putLong(ticks % 100 * 10_000);
    }

    /** NT_FILE: count, page size, (start, end, offset in pages) per file mapping, then the names. */
    private static byte[] fileNote(List<ProcFs.Region> regions) {
        List<ProcFs.Region> files = new ArrayList<>();
        for (ProcFs.Region r : regions) {
            if (r.fileBacked()) {
                files.add(r);
            }
        }
        ByteArrayOutputStream names = new ByteArrayOutputStream();
        ByteBuffer b = ByteBuffer.allocate(16 + 24 * files.size()).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(files.size()).putLong(PAGE);
        for (ProcFs.Region r : files) {
            b.putLong(r.start()).putLong(r.end()).putLong(r.offset() / PAGE);
            names.writeBytes(r.path().getBytes(StandardCharsets.UTF_8));
            names.write(0);
        }
        byte[] out = new byte[b.capacity() + names.size()];
        System.arraycopy(b.array(), 0, out, 0, b.capacity());
        System.arraycopy(names.toByteArray(), 0, out, b.capacity(), names.size());
        return out;
    }

    private static byte[] fixed(String s, int n) {
        byte[] out = new byte[n];
        byte[] src = s.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(src, 0, out, 0, Math.min(src.length, n - 1)); // always NUL-terminated
        return out;
    }

    /** ELF notes, each {namesz, descsz, type, "CORE\0" padded to 4, desc padded to 4}. */
    private static final class Notes {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        void add(int type, byte[] desc) {
            ByteBuffer h = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN);
            h.putInt(5).putInt(desc.length).putInt(type).put("CORE".getBytes(StandardCharsets.US_ASCII)).put((byte) 0);
            out.write(h.array(), 0, 20); // 12-byte header + "CORE\0" padded to 8
            out.writeBytes(desc);
            out.write(new byte[(4 - desc.length % 4) % 4], 0, (4 - desc.length % 4) % 4);
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }

    /** Reads what {@link Process} needs for {@code pid} from /proc (call while frozen). */
    public static Process describe(int pid, List<Registers.Thread> threads) throws IOException {
        List<ProcFs.Stat> stats = new ArrayList<>();
        List<Long> blocked = new ArrayList<>();
        for (Registers.Thread t : threads) {
            stats.add(ProcFs.taskStat(pid, t.tid()));
            String sig = ProcFs.status(ProcFs.dir(pid).resolve("task/" + t.tid() + "/status"))
                    .getOrDefault("SigBlk", "");
            blocked.add(sig.isEmpty() ? 0 : Long.parseUnsignedLong(sig, 16));
        }
        Map<String, String> status = ProcFs.status(ProcFs.dir(pid).resolve("status"));
        return new Process(ProcFs.stat(pid), firstField(status.getOrDefault("Uid", "")),
                firstField(status.getOrDefault("Gid", "")), ProcFs.cmdline(pid), ProcFs.auxv(pid), threads,
                stats, blocked);
    }

    private static int firstField(String s) {
        return s.isEmpty() ? 0 : Integer.parseInt(s.split("\\s+")[0]);
    }

    @Override
    public String toString() {
        return "ElfCore[" + regions.size() + " regions, " + size + " bytes]";
    }
}
