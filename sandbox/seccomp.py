"""One system-call policy for every sandbox backend.

The policy is a denylist, written once here as data, and compiled two ways: to a classic BPF
program for bubblewrap's `--seccomp` (the local backend) and to a Docker seccomp profile (JSON,
passed as `security_opt=["seccomp=..."]` by the docker backend, so the policy does not depend on
the engine's version of its default profile). Everything not named here is allowed; the sandbox
also drops every capability, so most calls below would fail anyway: the policy is a second wall,
and it closes what capabilities do not (vsock, io_uring, keyrings, ptrace of one's own processes).

It is at least as strict as Docker's default profile (whose allowlist leaves out every call below
that needs no capability), plus:
- sockets of any family but AF_UNIX, AF_INET and AF_INET6 (vsock crosses network namespaces and
  can reach a hypervisor; netlink, packet and the rest reach the kernel's network stack);
- io_uring, userfaultfd, perf_event_open, bpf, the keyring calls;
- ptrace, process_vm_*, pidfd_getfd and kcmp, whatever the target;
- personality changes (reading the personality is allowed);
- clone with any namespace flag, unshare, setns; clone3 answers ENOSYS so that the C library falls
  back to clone, whose flags a filter can read (clone3 passes them in memory).

Only x86_64 and aarch64 are known; the local backend refuses to start elsewhere, and a system call
of another ABI (x32, or 32-bit x86 through int 0x80) ends the process (local) or fails (docker).
"""

from __future__ import annotations

import errno
import json
import os
import struct
from dataclasses import dataclass
from functools import cache

# -- the policy ------------------------------------------------------------------------------------

DENIED_BY_KIND = {
    "kernel modules, kexec, reboot, swap, accounting, time": "init_module finit_module delete_module "
    "create_module get_kernel_syms query_module kexec_load kexec_file_load reboot swapon swapoff acct "
    "settimeofday clock_settime clock_adjtime",
    "mounts, roots, namespaces, file handles": "mount umount2 pivot_root chroot mount_setattr open_tree "
    "move_mount fsopen fsconfig fsmount fspick unshare setns sethostname setdomainname name_to_handle_at "
    "open_by_handle_at",
    "other processes' memory and descriptors": "ptrace process_vm_readv process_vm_writev process_madvise "
    "pidfd_getfd kcmp",
    "the kernel's riskier corners": "bpf perf_event_open userfaultfd io_uring_setup io_uring_enter "
    "io_uring_register keyctl add_key request_key lookup_dcookie fanotify_init syslog vhangup quotactl "
    "quotactl_fd nfsservctl uselib ustat sysfs _sysctl iopl ioperm modify_ldt memfd_secret",
    "NUMA placement (Docker: CAP_SYS_NICE)": "mbind migrate_pages move_pages set_mempolicy get_mempolicy "
    "set_mempolicy_home_node",
}
DENIED = [name for names in DENIED_BY_KIND.values() for name in names.split()]

AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
CLONE_NAMESPACES = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
PERSONALITY_QUERY = 0xFFFFFFFF


@dataclass(frozen=True)
class Rule:
    """Deny `name` with `errno_` when argument `arg` compares true (`op`: eq, ge, ne, or "bits":
    all of `value`'s bits set); with `arg` None, always."""

    name: str
    errno_: int = errno.EPERM
    arg: int | None = None
    op: str = "eq"
    value: int = 0


def rules() -> list[Rule]:
    out = [Rule(name) for name in DENIED]
    # Socket families: allow AF_UNIX, AF_INET, AF_INET6 only (0, 3..9 and 11 up are refused).
    for name in ("socket", "socketpair"):
        out += [Rule(name, errno.EAFNOSUPPORT, 0, "eq", family) for family in (0, 3, 4, 5, 6, 7, 8, 9)]
        out.append(Rule(name, errno.EAFNOSUPPORT, 0, "ge", AF_INET6 + 1))
    out += [Rule("clone", errno.EPERM, 0, "bits", flag) for flag in CLONE_NAMESPACES]
    out.append(Rule("clone3", errno.ENOSYS))
    out.append(Rule("personality", errno.EPERM, 0, "ne", PERSONALITY_QUERY))
    return out


# -- system call numbers (from the kernel's unistd headers) -----------------------------------------

NUMBERS = {
    "x86_64": {
        "acct": 163, "add_key": 248, "bpf": 321, "chroot": 161, "clock_adjtime": 305, "clock_settime": 227,
        "create_module": 174, "delete_module": 176, "fanotify_init": 300, "finit_module": 313, "fsconfig": 431,
        "fsmount": 432, "fsopen": 430, "fspick": 433, "get_kernel_syms": 177, "get_mempolicy": 239,
        "init_module": 175, "ioperm": 173, "iopl": 172, "io_uring_enter": 426, "io_uring_register": 427,
        "io_uring_setup": 425, "kcmp": 312, "kexec_file_load": 320, "kexec_load": 246, "keyctl": 250,
        "lookup_dcookie": 212, "mbind": 237, "migrate_pages": 256, "modify_ldt": 154, "mount": 165,
        "mount_setattr": 442, "move_mount": 429, "move_pages": 279, "name_to_handle_at": 303, "nfsservctl": 180,
        "open_by_handle_at": 304, "open_tree": 428, "perf_event_open": 298, "pidfd_getfd": 438, "pivot_root": 155,
        "process_madvise": 440, "process_vm_readv": 310, "process_vm_writev": 311, "ptrace": 101,
        "query_module": 178, "quotactl": 179, "quotactl_fd": 443, "reboot": 169, "request_key": 249,
        "set_mempolicy": 238, "set_mempolicy_home_node": 450, "setdomainname": 171, "sethostname": 170,
        "setns": 308, "settimeofday": 164, "swapoff": 168, "swapon": 167, "_sysctl": 156, "sysfs": 139,
        "syslog": 103, "umount2": 166, "unshare": 272, "uselib": 134, "userfaultfd": 323, "ustat": 136,
        "vhangup": 153, "socket": 41, "socketpair": 53, "clone": 56, "clone3": 435, "personality": 135,
        "memfd_secret": 447,
    },
    "aarch64": {
        "acct": 89, "add_key": 217, "bpf": 280, "chroot": 51, "clock_adjtime": 266, "clock_settime": 112,
        "delete_module": 106, "fanotify_init": 262, "finit_module": 273, "fsconfig": 431, "fsmount": 432,
        "fsopen": 430, "fspick": 433, "get_mempolicy": 236, "init_module": 105, "io_uring_enter": 426,
        "io_uring_register": 427, "io_uring_setup": 425, "kcmp": 272, "kexec_file_load": 294, "kexec_load": 104,
        "keyctl": 219, "lookup_dcookie": 18, "mbind": 235, "migrate_pages": 238, "mount": 40,
        "mount_setattr": 442, "move_mount": 429, "move_pages": 239, "name_to_handle_at": 264, "nfsservctl": 42,
        "open_by_handle_at": 265, "open_tree": 428, "perf_event_open": 241, "pidfd_getfd": 438, "pivot_root": 41,
        "process_madvise": 440, "process_vm_readv": 270, "process_vm_writev": 271, "ptrace": 117, "quotactl": 60,
        "quotactl_fd": 443, "reboot": 142, "request_key": 218, "set_mempolicy": 237,
        "set_mempolicy_home_node": 450, "setdomainname": 162, "sethostname": 161, "setns": 268,
        "settimeofday": 170, "swapoff": 225, "swapon": 224, "syslog": 116, "umount2": 39, "unshare": 97,
        "userfaultfd": 282, "vhangup": 58, "socket": 198, "socketpair": 199, "clone": 220, "clone3": 435,
        "personality": 92, "memfd_secret": 447,
    },
}  # fmt: skip
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_BIT = 0x40000000
DOCKER_ARCH = {"x86_64": "SCMP_ARCH_X86_64", "aarch64": "SCMP_ARCH_AARCH64"}


def machine() -> str:
    return os.uname().machine


# -- classic BPF, for bubblewrap -------------------------------------------------------------------

LD_W_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW, RET_ERRNO, RET_KILL = 0x7FFF0000, 0x00050000, 0x80000000
OFF_NR, OFF_ARCH = 0, 4


def _arg_low(index: int) -> int:
    # seccomp_data.args[index], its low 32 bits (little-endian): the kernel reads these int
    # arguments (family, flags, persona) from the low half of the register.
    return 16 + 8 * index


@cache
def bpf_program(arch: str | None = None) -> bytes | None:
    """The policy as a classic BPF filter (struct sock_filter[]), or None on an unknown machine."""
    arch = arch or machine()
    numbers = NUMBERS.get(arch)
    if numbers is None:
        return None
    prog: list[tuple[int, int, int, int]] = [
        (LD_W_ABS, 0, 0, OFF_ARCH),
        (JEQ, 1, 0, AUDIT_ARCH[arch]),
        (RET, 0, 0, RET_KILL),
        (LD_W_ABS, 0, 0, OFF_NR),
    ]
    if arch == "x86_64":
        prog += [(JGE, 0, 1, X32_BIT), (RET, 0, 0, RET_KILL)]
    for rule in rules():
        nr = numbers.get(rule.name)
        if nr is None:
            continue
        deny = (RET, 0, 0, RET_ERRNO | rule.errno_)
        if rule.arg is None:
            prog += [(JEQ, 0, 1, nr), deny]
            continue
        # Not this call: skip the 4 instructions of the test. Else load the argument, test it,
        # deny or reload the number and go on.
        if rule.op == "eq":
            test = (JEQ, 0, 1, rule.value)
        elif rule.op == "ne":
            test = (JEQ, 1, 0, rule.value)
        elif rule.op == "ge":
            test = (JGE, 0, 1, rule.value)
        elif rule.op == "bits":
            test = (JSET, 0, 1, rule.value)
        else:
            raise ValueError(rule.op)
        prog += [(JEQ, 0, 4, nr), (LD_W_ABS, 0, 0, _arg_low(rule.arg)), test, deny, (LD_W_ABS, 0, 0, OFF_NR)]
    prog.append((RET, 0, 0, RET_ALLOW))
    return b"".join(struct.pack("HBBI", *insn) for insn in prog)


# -- a Docker profile ------------------------------------------------------------------------------

DOCKER_OPS = {"eq": "SCMP_CMP_EQ", "ne": "SCMP_CMP_NE", "ge": "SCMP_CMP_GE", "bits": "SCMP_CMP_MASKED_EQ"}


@cache
def docker_profile(arch: str | None = None) -> str:
    """The policy as a Docker seccomp profile (JSON text): allow by default, the rules deny."""
    arch = arch or machine()
    syscalls = []
    for rule in rules():
        entry: dict = {"names": [rule.name], "action": "SCMP_ACT_ERRNO", "errnoRet": rule.errno_}
        if rule.arg is not None:
            arg = {"index": rule.arg, "value": rule.value, "op": DOCKER_OPS[rule.op]}
            if rule.op == "bits":
                arg["valueTwo"] = rule.value
            entry["args"] = [arg]
        syscalls.append(entry)
    profile = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": [DOCKER_ARCH.get(arch, "")], "syscalls": syscalls}
    if arch not in DOCKER_ARCH:
        del profile["architectures"]
    return json.dumps(profile, separators=(",", ":"))
