"""A warm sandbox back to how it started after each run: the writable folders and SysV IPC."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat

from .processes import libc

WRITABLE = ("/tmp", "/dev/shm", "/dev/mqueue", "/dev")  # noqa: S108 - the sandbox's own mounts


def entry_print(path: str) -> tuple:
    st = os.lstat(path)
    target = os.readlink(path) if stat.S_ISLNK(st.st_mode) else ""
    return (st.st_mode, st.st_uid, st.st_ino, st.st_rdev, target)


def folder_meta(path: str) -> tuple:
    """What a run could leave on a folder itself: its modification time and extended attributes.
    (Not its access time: the supervisor lists every folder after every run itself.)"""
    st = os.lstat(path)
    try:
        xattrs = tuple(sorted((name, os.getxattr(path, name)) for name in os.listxattr(path)))
    except OSError:
        xattrs = ()
    return (st.st_mtime_ns, xattrs)


def snapshot() -> dict:
    """What the writable folders hold when the server is ready: their own mode, modification time
    and extended attributes, and each entry."""
    shot = {}
    for folder in WRITABLE:
        if os.path.isdir(folder) and not os.path.islink(folder):
            shot[folder] = (
                entry_print(folder),
                folder_meta(folder),
                {name: entry_print(os.path.join(folder, name)) for name in os.listdir(folder)},
            )
    return shot


def wipe(shot: dict) -> bool:
    """Removes what a run added to the writable folders and puts back their times and extended
    attributes; False when something cannot be put back (a device node removed or replaced, a
    mode changed, a folder this user does not own touched)."""
    clean = True
    for folder, (own, meta, entries) in shot.items():
        try:
            if entry_print(folder) != own:
                clean = False
            for name in os.listdir(folder):
                path = os.path.join(folder, name)
                if name in entries and entry_print(path) == entries[name]:
                    continue
                if name in entries:
                    clean = False
                remove(path)
            restore_meta(folder, meta)
            clean = clean and folder_meta(folder) == meta
        except OSError:
            clean = False
    return clean and ipc_clear()


def restore_meta(folder: str, meta: tuple) -> None:
    mtime_ns, xattrs = meta
    kept = dict(xattrs)
    with contextlib.suppress(OSError):
        for name in os.listxattr(folder):
            if name not in kept:
                os.removexattr(folder, name)
        for name, value in kept.items():
            os.setxattr(folder, name, value)
    if os.lstat(folder).st_mtime_ns != mtime_ns:
        with contextlib.suppress(OSError):
            os.utime(folder, ns=(os.lstat(folder).st_atime_ns, mtime_ns))


def remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        # A run may have taken away its own permissions on a folder of its own.
        for root, dirs, _files in os.walk(path):
            for d in dirs:
                with contextlib.suppress(OSError):
                    os.chmod(os.path.join(root, d), 0o700)
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)
        shutil.rmtree(path)
    else:
        os.unlink(path)


def ipc_clear() -> bool:
    """SysV shared memory, semaphores and message queues outlive their processes: remove them.
    (POSIX message queues, shared memory and semaphores are files in /dev/mqueue and /dev/shm.)"""
    c = libc()
    ok = True
    removers = {  # IPC_RMID
        "shm": lambda ipc_id: c.shmctl(ipc_id, 0, None),
        "sem": lambda ipc_id: c.semctl(ipc_id, 0, 0),
        "msg": lambda ipc_id: c.msgctl(ipc_id, 0, None),
    }
    for kind, remove_one in removers.items():
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                ids = [int(line.split()[1]) for line in f.readlines()[1:] if line.strip()]
        except OSError:
            continue
        for ipc_id in ids:
            ok = ok and remove_one(ipc_id) == 0
    return ok
