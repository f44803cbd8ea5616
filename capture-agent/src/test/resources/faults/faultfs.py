#!/usr/bin/python3
"""faultfs: a read-only FUSE pass-through over BACKING at MOUNTPOINT whose files fail as a bad disk does.

Names, types, sizes, modes and link targets are the backing directory's, so a layout check
passes; then every read(2) of a regular file fails with EIO, or (mode EACCES) every open(2) of
one fails with EACCES. The errors reach the reader from the kernel, as from a failing disk or
a file system that refuses the reader: nothing in the reader's process is faked.

Usage: faultfs.py BACKING MOUNTPOINT EIO|EACCES   (foreground; unmount with fusermount -u)
"""
import errno
import os
import sys

from fusepy import FUSE, FuseOSError, Operations


class Faulty(Operations):
    def __init__(self, backing, mode):
        self.backing = backing
        self.mode = mode

    def _path(self, path):
        return os.path.join(self.backing, path.lstrip("/"))

    def getattr(self, path, fh=None):
        st = os.lstat(self._path(path))
        return {k: getattr(st, k) for k in ("st_mode", "st_size", "st_uid", "st_gid", "st_nlink",
                                            "st_atime", "st_mtime", "st_ctime")}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._path(path))

    def readlink(self, path):
        return os.readlink(self._path(path))

    def access(self, path, amode):
        if not os.path.lexists(self._path(path)):
            raise FuseOSError(errno.ENOENT)

    def open(self, path, flags):
        if flags & (os.O_WRONLY | os.O_RDWR):
            raise FuseOSError(errno.EROFS)
        if self.mode == "EACCES":
            raise FuseOSError(errno.EACCES)
        return 0

    def read(self, path, size, offset, fh):
        raise FuseOSError(errno.EIO)

    def statfs(self, path):
        st = os.statvfs(self.backing)
        return {k: getattr(st, k) for k in ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail",
                                            "f_files", "f_ffree", "f_namemax")}


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in ("EIO", "EACCES"):
        sys.exit("usage: faultfs.py BACKING MOUNTPOINT EIO|EACCES")
    FUSE(Faulty(os.path.abspath(sys.argv[1]), sys.argv[3]), sys.argv[2], foreground=True, nothreads=True, ro=True)
