package io.ferry.agent.capture;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Reads an ELF core file back for tests: its program headers, notes and memory by address. */
final class CoreFile implements AutoCloseable {
    record Load(long vaddr, long offset, long filesz, long memsz, int flags) {}

    record Note(int type, byte[] desc) {}

    final List<Load> loads = new ArrayList<>();
    final List<Note> notes = new ArrayList<>();
    private final FileChannel ch;

    CoreFile(Path file) throws IOException {
        ch = FileChannel.open(file);
        ByteBuffer eh = read(0, 64);
        if (eh.getInt(0) != 0x464c457f || eh.getShort(16) != 4) {
            throw new IOException("not an ELF core: " + file);
        }
        long phoff = eh.getLong(32);
        int phnum = eh.getShort(56) & 0xffff;
        for (int i = 0; i < phnum; i++) {
            ByteBuffer ph = read(phoff + 56L * i, 56);
            int type = ph.getInt(0);
            if (type == 1) {
                loads.add(new Load(ph.getLong(16), ph.getLong(8), ph.getLong(32), ph.getLong(40), ph.getInt(4)));
            } else if (type == 4) {
                ByteBuffer n = read(ph.getLong(8), (int) ph.getLong(32));
                while (n.remaining() >= 12) {
                    int namesz = n.getInt();
                    int descsz = n.getInt();
                    int ntype = n.getInt();
                    n.position(n.position() + (namesz + 3) / 4 * 4);
                    byte[] d = new byte[descsz];
                    n.get(d);
                    n.position(Math.min(n.limit(), n.position() + (4 - descsz % 4) % 4));
                    notes.add(new Note(ntype, d));
                }
            }
        }
    }

    long u64(long vaddr) throws IOException {
        for (Load l : loads) {
            if (vaddr >= l.vaddr() && vaddr + 8 <= l.vaddr() + l.filesz()) {
                return read(l.offset() + vaddr - l.vaddr(), 8).getLong(0);
            }
        }
        throw new IOException("address " + Long.toHexString(vaddr) + " not in the core");
    }

    List<Note> notes(int type) {
        return notes.stream().filter(n -> n.type() == type).toList();
    }

    private ByteBuffer read(long at, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            if (ch.read(b, at + b.position()) < 0) {
                throw new IOException("core file ends at " + (at + b.position()));
            }
        }
        return b.flip();
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
