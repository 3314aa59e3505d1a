"""The seccomp filter of the sandbox: the system calls agent code may not make.

Bubblewrap drops every capability and shows the kernel's tunables read-only, but some kernel
interfaces are reached by system calls that no mount can hide. The filter, loaded by bubblewrap
right before the command starts (`bwrap --seccomp FD`) and inherited by everything the command
starts, refuses:

- mounting and namespaces: `mount`, `umount2`, `pivot_root`, `chroot`, the new mount API
  (`fsopen`, `fsmount`, `move_mount`, `open_tree`, ...), `unshare`, `setns`, `clone` with a
  namespace flag, and `clone3` (ENOSYS, so that C libraries fall back to `clone`, whose flags a
  filter can read): a new user namespace would give back capabilities inside it;
- the kernel's keyrings, which no namespace separates (as root, the host's root keyring):
  `keyctl`, `add_key`, `request_key`;
- reading or steering other processes: `ptrace`, `process_vm_readv`, `process_vm_writev`;
- the kernel itself: modules, `kexec`, `bpf`, `perf_event_open`, `userfaultfd`, `reboot`,
  swap, the clock, `syslog`, `acct`, quotas, I/O ports, `open_by_handle_at`;
- with the network off (`network: false`), `socket(AF_UNIX, ...)` (EACCES): a Unix socket file
  in a folder the sandbox shows read-only (the system, a virtualenv, a folder on PATH) would
  otherwise reach a server outside. `socketpair` stays allowed, so processes of the command
  still talk to one another.

Refused calls fail with EPERM (EACCES for the socket, ENOSYS for `clone3`); a system call of
another architecture (32-bit or x32 on a 64-bit machine) ends the process. The filter is built
with libseccomp (Debian's `libseccomp2`, which systemd needs, so it is almost always there) and
exported as the BPF program bubblewrap loads.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import socket
from typing import Final

from gradekit.core.errors import SandboxError

__all__ = ["REFUSED", "program", "unavailable"]

REFUSED: Final = (
    # mounting and namespaces
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "unshare",
    "setns",
    # the kernel's keyrings
    "keyctl",
    "add_key",
    "request_key",
    # other processes
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    # the kernel itself
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "quotactl_fd",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "iopl",
    "ioperm",
    "open_by_handle_at",
    "lookup_dcookie",
    "nfsservctl",
    "uselib",
    "vhangup",
)
"""The system calls refused with EPERM whatever the network."""

_NAMESPACE_FLAGS: Final = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
    0x00000080,  # CLONE_NEWTIME
)

_ALLOW: Final = 0x7FFF0000
_ERRNO: Final = 0x00050000
_CMP_EQ: Final = 4
_CMP_MASKED_EQ: Final = 7


class _Compare(ctypes.Structure):
    """libseccomp's `struct scmp_arg_cmp`: argument `arg` compared by `op` with the data."""

    _fields_ = (
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    )


def unavailable() -> str | None:
    """Why no filter can be built on this machine (libseccomp missing), or None."""
    try:
        _library()
    except SandboxError as error:
        return str(error)
    return None


@functools.cache
def program(network: bool) -> bytes:
    """The filter's BPF program, as `bwrap --seccomp FD` reads it. Raises SandboxError where
    libseccomp is missing or refuses a rule."""
    lib = _library()
    context = lib.seccomp_init(_ALLOW)
    if not context:
        raise SandboxError("libseccomp could not start a filter; reinstall libseccomp2")
    try:
        for name in REFUSED:
            _refuse(lib, context, name, errno.EPERM)
        for flag in _NAMESPACE_FLAGS:
            _refuse(lib, context, "clone", errno.EPERM, _Compare(0, _CMP_MASKED_EQ, flag, flag))
        _refuse(lib, context, "clone3", errno.ENOSYS)
        if not network:
            unix = _Compare(0, _CMP_EQ, socket.AF_UNIX, 0)
            _refuse(lib, context, "socket", errno.EACCES, unix)
        return _exported(lib, context)
    finally:
        lib.seccomp_release(context)


def _refuse(lib: ctypes.CDLL, context: int, name: str, code: int, *compare: _Compare) -> None:
    number = lib.seccomp_syscall_resolve_name(name.encode())
    if number == -1:  # __NR_SCMP_ERROR: a name libseccomp does not know (an older release)
        return
    array = (_Compare * len(compare))(*compare) if compare else None
    status = lib.seccomp_rule_add_array(context, _ERRNO | code, number, len(compare), array)
    if status < 0:
        raise SandboxError(
            f"libseccomp refused the sandbox's rule for {name}: {os.strerror(-status)}; "
            "update libseccomp2"
        )


def _exported(lib: ctypes.CDLL, context: int) -> bytes:
    # A few hundred bytes: the pipe holds them all before they are read.
    read, write = os.pipe()
    try:
        status = lib.seccomp_export_bpf(context, write)
        os.close(write)
        write = -1
        if status < 0:
            raise SandboxError(
                f"libseccomp could not export the sandbox's filter: {os.strerror(-status)}"
            )
        chunks = []
        while chunk := os.read(read, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


@functools.cache
def _library() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL("libseccomp.so.2")
    except OSError:
        name = ctypes.util.find_library("seccomp")
        if name is None:
            raise SandboxError(
                "libseccomp is not installed, and the sandbox's seccomp filter needs it; "
                "install it (Debian: apt-get install libseccomp2)"
            ) from None
        lib = ctypes.CDLL(name)
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.restype = None
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_Compare),
    ]
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_export_bpf.restype = ctypes.c_int
    return lib
