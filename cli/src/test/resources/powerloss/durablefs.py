#!/usr/bin/python3
"""durablefs: an in-memory FUSE file system that keeps, at a power cut, only what was made durable.

It models the strict POSIX durability contract, nothing kinder:

- A file has live data (what reads see, as the page cache would) and durable data (None until
  its first fsync). fsync and fdatasync of a file copy its live data to its durable data.
- A directory has live entries {name: inode} and durable entries. create, mkdir, rename,
  unlink, rmdir and symlink change only the live entries; fsync of a directory fd (the kernel
  sends FSYNCDIR, also for a directory opened with open(2), as Java's
  FileChannel.open(dir).force(true) does) copies its live entries to its durable entries. The
  entries point at inodes, so a file renamed after its fsync but before its directory's keeps
  its synced data under its old name.
- The cut (SIGUSR1, SIGTERM or SIGINT, or right after the N-th change; there is no clean
  unmount): every operation stops, the durable state is written to the backing directory
  (walking from the root's durable entries; a reachable file never synced is written empty),
  the mount is lazily unmounted and the process exits. Real file systems may also show stale
  or zero-filled data for an unsynced file, or keep more than was synced; this model keeps
  exactly the contract.
- Mounting from a backing directory starts with live = durable = its contents.

What it does not model: reordering or tearing within a file beyond "unsynced = lost" (a file
comes back as of its last fsync, or empty if it never had one); metadata (mode, owner and times are kept with
the inode, as if always durable); hard links, xattrs and special files (refused); the
journal's habit of committing a new file's directory entry with its fsync (not promised by
POSIX, so not given here). Writes reach this process before write(2) returns (libfuse 2 has
no writeback cache), so direct_io is not needed and mmap keeps working.

Usage: durablefs.py BACKING MOUNTPOINT [N]   (as root: allow_other, so any uid can use it)
N > 0: the cut comes by itself right after the N-th operation that changes the live state
(write, fsync, rename, ...), so a test can land it inside a write path rather than between
commands.
"""
import errno
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time

from fusepy import FUSE, FuseOSError, Operations


class Inode:
    def __init__(self, mode):
        self.mode = mode
        now = time.time()
        self.atime = self.mtime = self.ctime = now


class File(Inode):
    def __init__(self, mode, data=None):
        super().__init__(stat.S_IFREG | (mode & 0o7777))
        self.live = bytearray(data or b"")
        self.durable = None if data is None else bytes(data)


class Dir(Inode):
    def __init__(self, mode):
        super().__init__(stat.S_IFDIR | (mode & 0o7777))
        self.live = {}
        self.durable = {}


class Link(Inode):
    def __init__(self, target):
        super().__init__(stat.S_IFLNK | 0o777)
        self.target = target


# The operations that change the live state; the cut can come after any one of them.
MUTATING = {"create", "mkdir", "symlink", "unlink", "rmdir", "rename", "chmod", "utimens", "write", "truncate",
            "fsync", "fsyncdir"}


class DurableFs(Operations):
    use_ns = False

    def __init__(self, backing, mountpoint, cut_after):
        self.backing, self.mountpoint, self.cut_after = backing, mountpoint, cut_after
        self.ops = 0
        self.mutex = threading.Lock()
        self.handles = {}
        self.next_fh = 1
        self.root = load(backing) if os.path.isdir(backing) else Dir(0o755)

    def __call__(self, op, *args):
        with self.mutex:  # one operation at a time: the cut sees a state between two of them
            ret = super().__call__(op, *args)
            if op in MUTATING:
                self.ops += 1
                if self.ops == self.cut_after:
                    cut(self, f"after operation {self.ops}, {op}")  # does not return
            return ret

    # ---- lookups (always in the live tree, as the kernel sees it) ----
    def node(self, path):
        n = self.root
        for part in filter(None, path.split("/")):
            if not isinstance(n, Dir) or part not in n.live:
                raise FuseOSError(errno.ENOENT)
            n = n.live[part]
        return n

    def parent(self, path):
        head, name = os.path.split(path.rstrip("/"))
        d = self.node(head)
        if not isinstance(d, Dir):
            raise FuseOSError(errno.ENOTDIR)
        return d, name

    def by_fh(self, path, fh):
        return self.handles[fh] if fh in self.handles else self.node(path)

    def handle(self, n):
        fh, self.next_fh = self.next_fh, self.next_fh + 1
        self.handles[fh] = n
        return fh

    def add(self, path, n):
        d, name = self.parent(path)
        if name in d.live:
            raise FuseOSError(errno.EEXIST)
        d.live[name] = n
        d.mtime = time.time()
        return n

    # ---- metadata ----
    def getattr(self, path, fh=None):
        n = self.by_fh(path, fh)
        size = len(n.live) if isinstance(n, File) else len(n.target) if isinstance(n, Link) else 4096
        return dict(st_mode=n.mode, st_nlink=2 if isinstance(n, Dir) else 1, st_size=size,
                    st_uid=os.getuid(), st_gid=os.getgid(), st_atime=n.atime, st_mtime=n.mtime, st_ctime=n.ctime,
                    st_blocks=(size + 511) // 512)

    def chmod(self, path, mode):
        n = self.node(path)
        n.mode = (n.mode & ~0o7777) | (mode & 0o7777)
        return 0

    def chown(self, path, uid, gid):
        return 0  # owners are not modelled: everything belongs to the mounting user

    def utimens(self, path, times=None):
        n = self.node(path)
        n.atime, n.mtime = times or (time.time(), time.time())
        return 0

    def statfs(self, path):
        return dict(f_bsize=4096, f_frsize=4096, f_blocks=1 << 24, f_bfree=1 << 23, f_bavail=1 << 23,
                    f_files=1 << 20, f_ffree=1 << 19, f_namemax=255)

    # ---- names: live entries only ----
    def create(self, path, mode, fi=None):
        return self.handle(self.add(path, File(mode)))

    def mkdir(self, path, mode):
        self.add(path, Dir(mode))
        return 0

    def symlink(self, target, source):
        self.add(target, Link(source))
        return 0

    def readlink(self, path):
        return self.node(path).target

    def unlink(self, path):
        d, name = self.parent(path)
        if isinstance(self.node(path), Dir):
            raise FuseOSError(errno.EISDIR)
        del d.live[name]
        return 0

    def rmdir(self, path):
        d, name = self.parent(path)
        n = self.node(path)
        if not isinstance(n, Dir):
            raise FuseOSError(errno.ENOTDIR)
        if n.live:
            raise FuseOSError(errno.ENOTEMPTY)
        del d.live[name]
        return 0

    def rename(self, old, new):
        src, sname = self.parent(old)
        dst, dname = self.parent(new)
        n = self.node(old)
        existing = dst.live.get(dname)
        if isinstance(existing, Dir) and (not isinstance(n, Dir) or existing.live):
            raise FuseOSError(errno.ENOTEMPTY if isinstance(n, Dir) else errno.EISDIR)
        del src.live[sname]
        dst.live[dname] = n
        return 0

    def link(self, target, source):
        raise FuseOSError(errno.EPERM)

    # ---- data ----
    def open(self, path, flags):
        return self.handle(self.node(path))

    def opendir(self, path):
        return self.handle(self.node(path))

    def readdir(self, path, fh):
        return [".", ".."] + list(self.by_fh(path, fh).live)

    def read(self, path, size, offset, fh):
        return bytes(self.by_fh(path, fh).live[offset:offset + size])

    def write(self, path, data, offset, fh):
        f = self.by_fh(path, fh)
        if offset > len(f.live):
            f.live.extend(bytes(offset - len(f.live)))
        f.live[offset:offset + len(data)] = data
        f.mtime = time.time()
        return len(data)

    def truncate(self, path, length, fh=None):
        f = self.by_fh(path, fh)
        del f.live[length:]
        f.live.extend(bytes(length - len(f.live)))
        return 0

    def fsync(self, path, datasync, fh):
        f = self.by_fh(path, fh)
        f.durable = bytes(f.live)
        return 0

    def fsyncdir(self, path, datasync, fh):
        d = self.by_fh(path, fh)
        d.durable = dict(d.live)
        return 0

    def release(self, path, fh):
        self.handles.pop(fh, None)
        return 0

    def releasedir(self, path, fh):
        self.handles.pop(fh, None)
        return 0


def load(backing):
    """A tree whose live and durable states are both the backing directory's contents."""
    def walk(path):
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode):
            d = Dir(st.st_mode)
            for name in os.listdir(path):
                d.live[name] = walk(os.path.join(path, name))
            d.durable = dict(d.live)
            return d
        if stat.S_ISLNK(st.st_mode):
            return Link(os.readlink(path))
        with open(path, "rb") as f:
            n = File(st.st_mode, f.read())
        n.atime, n.mtime = st.st_atime, st.st_mtime
        return n
    return walk(backing)


def dump(root, backing):
    """Writes the durable state into backing (replacing it); returns (files, bytes, empty files)."""
    counts = [0, 0, 0]

    def walk(d, path):
        os.mkdir(path, d.mode & 0o7777 | 0o700)
        for name, n in d.durable.items():
            p = os.path.join(path, name)
            if isinstance(n, Dir):
                walk(n, p)
            elif isinstance(n, Link):
                os.symlink(n.target, p)
            else:
                data = n.durable or b""  # never synced: empty (strict contract; real disks may show stale bytes)
                with open(p, "wb") as f:
                    f.write(data)
                os.chmod(p, n.mode & 0o7777)
                os.utime(p, (n.atime, n.mtime))
                counts[0] += 1
                counts[1] += len(data)
                counts[2] += n.durable is None
    fresh = backing.rstrip("/") + ".cut"
    shutil.rmtree(fresh, ignore_errors=True)
    walk(root, fresh)
    shutil.rmtree(backing, ignore_errors=True)
    os.rename(fresh, backing)
    return counts


def serve(fs, mountpoint, options):
    try:
        FUSE(fs, mountpoint, **options)
    finally:  # unmounted from outside, or the mount failed: that ends it as a cut does
        os.kill(os.getpid(), signal.SIGTERM)


def not_durable(root):
    """Files of the live tree (count, bytes) that the cut loses in part or whole: unsynced data or name."""
    durable = set()

    def walk(d, entries):
        for n in entries(d).values():
            if isinstance(n, Dir):
                yield from walk(n, entries)
            elif isinstance(n, File):
                yield n
    for f in walk(root, lambda d: d.durable):
        durable.add(id(f))
    lost = [f for f in walk(root, lambda d: d.live) if id(f) not in durable or f.durable != f.live]
    return len(lost), sum(len(f.live) for f in lost)


def cut(fs, why):
    """The power goes: called with fs.mutex held, so nothing changes after it; never returns."""
    lost, lost_bytes = not_durable(fs.root)
    files, size, empty = dump(fs.root, fs.backing)
    print(f"durablefs: cut ({why}): {files} files ({size} bytes) durable, {empty} of them never synced and empty;"
          f" {lost} live files ({lost_bytes} bytes) not durable, lost; backing {fs.backing}", file=sys.stderr, flush=True)
    # Not waited for: a fuse thread may be the caller. Exiting closes /dev/fuse, which fails every
    # request still in flight; the lazy unmount takes the dead mount away.
    subprocess.Popen((["umount", "-l"] if os.getuid() == 0 else ["fusermount", "-u", "-z"]) + [fs.mountpoint])
    os._exit(0)


def main():
    backing, mountpoint = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    cut_after = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    fs = DurableFs(backing, mountpoint, cut_after)
    # The cut signals wait for the main thread alone (sigwait): fuse's threads inherit the block.
    signals = {signal.SIGUSR1, signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    options = dict(foreground=True, fsname="durablefs", subtype="durablefs", hard_remove=True, big_writes=True)
    if os.getuid() == 0:
        options["allow_other"] = True
    threading.Thread(target=serve, args=(fs, mountpoint, options), daemon=True).start()
    sig = signal.sigwait(signals)
    fs.mutex.acquire()
    cut(fs, f"{signal.Signals(sig).name} after operation {fs.ops}")


if __name__ == "__main__":
    main()
