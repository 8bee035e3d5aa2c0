//! The machine's security controls (firewalls, mandatory access control,
//! audit, endpoint protection, kernel hardening) and what switches each
//! off: one table, an example per entry.
//!
//! Three readings share it: a control's own program given an argument
//! pattern that disables it (`ufw disable`, `setenforce 0`), a service
//! manager stopping or disabling a unit whose name says it is a control
//! (`systemctl stop auditd`), and a kernel setting that hardens the system
//! set to 0 (`sysctl -w kernel.randomize_va_space=0`, or written under
//! `/proc/sys`).

/// A control's program and the arguments that switch it off.
#[derive(Debug, Clone, Copy)]
pub struct Control {
    /// Its program names.
    pub programs: &'static [&'static str],
    /// Argument sequences that switch it off, each matched in order and
    /// contiguously: `*` stands for any one argument, a trailing `*` in an
    /// element for any ending. An empty list: running it switches it off.
    pub off: &'static [&'static [&'static str]],
    /// A command that switches it off, for the tests.
    pub example: &'static str,
}

/// Every control's own program.
pub const CONTROLS: &[Control] = &[
    Control {
        programs: &["iptables", "ip6tables", "iptables-legacy", "iptables-nft"],
        off: &[
            &["-F"],
            &["--flush"],
            &["-P", "*", "ACCEPT"],
            &["--policy", "*", "ACCEPT"],
        ],
        example: "iptables -P INPUT ACCEPT",
    },
    Control {
        programs: &["nft"],
        off: &[&["flush", "ruleset"]],
        example: "nft flush ruleset",
    },
    Control {
        programs: &["ufw"],
        off: &[&["disable"], &["reset"]],
        example: "ufw --force reset",
    },
    Control {
        programs: &["firewall-cmd"],
        off: &[
            &["--set-default-zone=trusted"],
            &["--set-default-zone", "trusted"],
        ],
        example: "firewall-cmd --set-default-zone=trusted",
    },
    Control {
        programs: &["setenforce"],
        off: &[&["0"], &["permissive"], &["Permissive"]],
        example: "setenforce 0",
    },
    Control {
        programs: &["auditctl"],
        off: &[&["-D"], &["-e", "0"]],
        example: "auditctl -e 0",
    },
    Control {
        programs: &["aa-teardown", "aa-complain", "aa-disable"],
        off: &[],
        example: "aa-complain /etc/apparmor.d/usr.sbin.nginx",
    },
    Control {
        programs: &["spctl"],
        off: &[&["--master-disable"], &["--global-disable"]],
        example: "spctl --master-disable",
    },
    Control {
        programs: &["csrutil"],
        off: &[&["disable"]],
        example: "csrutil disable",
    },
    Control {
        programs: &["Set-MpPreference"],
        off: &[&["-Disable*"]],
        example: "Set-MpPreference -DisableRealtimeMonitoring 1",
    },
];

/// Programs that stop, disable or unload services.
pub const SERVICE_MANAGERS: &[&str] = &[
    "systemctl",
    "service",
    "launchctl",
    "rc-service",
    "rc-update",
    "sv",
    "chkconfig",
    "update-rc.d",
    "sc",
    "Stop-Service",
    "Set-Service",
];

/// Programs that stop processes by their name (`pkill -f falcon-sensor`):
/// one whose name says it is a control is a control stopped.
pub const PROCESS_KILLERS: &[&str] = &["pkill", "killall", "skill", "taskkill", "Stop-Process"];

/// Verbs of a service manager that take a service down.
pub const STOPPING_VERBS: &[&str] = &[
    "stop", "disable", "mask", "kill", "unload", "bootout", "remove", "off", "del", "delete",
];

/// Tokens of a unit's name that make it a security control.
pub const SECURITY_UNIT_TOKENS: &[&str] = &[
    "audit",
    "auditd",
    "auditbeat",
    "apparmor",
    "selinux",
    "firewall",
    "firewalld",
    "ufw",
    "nftables",
    "iptables",
    "netfilter",
    "fail2ban",
    "clamav",
    "clamd",
    "freshclam",
    "falcon",
    "crowdstrike",
    "osquery",
    "osqueryd",
    "wazuh",
    "ossec",
    "sysmon",
    "defender",
    "mdatp",
    "sentinelone",
    "alf",
    "aide",
    "tripwire",
    "suricata",
    "snort",
    "windefend",
];

/// Kernel settings that harden the system, which 0 turns off.
pub const HARDENING_SETTINGS: &[&str] = &[
    "kernel.randomize_va_space",
    "kernel.yama.ptrace_scope",
    "kernel.kptr_restrict",
    "kernel.dmesg_restrict",
    "kernel.unprivileged_bpf_disabled",
    "kernel.kexec_load_disabled",
    "fs.protected_symlinks",
    "fs.protected_hardlinks",
    "fs.protected_regular",
    "fs.protected_fifos",
    "fs.suid_dumpable",
];

/// Ports of remote login (SSH, telnet, RDP, VNC): a tunnel that exposes
/// one hands out a way in.
pub const LOGIN_PORTS: &[u16] = &[22, 23, 3389, 5900];

/// Ports of data stores (PostgreSQL, MySQL, Redis, MongoDB, Elasticsearch,
/// etcd, Memcached, SQL Server, CouchDB): a relay that exposes one hands
/// out its data.
pub const DATA_PORTS: &[u16] = &[5432, 3306, 6379, 27017, 9200, 2379, 11211, 1433, 5984];

/// The control whose own program `program` is, if it is one.
pub fn control(program: &str) -> Option<&'static Control> {
    CONTROLS.iter().find(|c| c.programs.contains(&program))
}

impl Control {
    /// Whether `args` switch this control off.
    pub fn switched_off(&self, args: &[&str]) -> bool {
        self.off.is_empty()
            || self.off.iter().any(|pattern| {
                args.windows(pattern.len())
                    .any(|w| w.iter().zip(pattern.iter()).all(|(a, p)| matches(a, p)))
            })
    }
}

fn matches(arg: &str, pattern: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some("") => true,
        Some(prefix) => arg.starts_with(prefix),
        None => arg == pattern,
    }
}

/// The hardening setting a `/proc/sys` path or a `sysctl` key names, in
/// dotted form, if it is one.
pub fn hardening_setting(key_or_path: &str) -> Option<&'static str> {
    match key_or_path.strip_prefix("/proc/sys/") {
        Some(path) => HARDENING_SETTINGS.iter().copied().find(|s| {
            s.len() == path.len()
                && s.bytes()
                    .zip(path.bytes())
                    .all(|(a, b)| a == b || (a == b'.' && b == b'/'))
        }),
        None => HARDENING_SETTINGS
            .iter()
            .copied()
            .find(|s| *s == key_or_path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_is_switched_off_by_its_example() {
        for c in CONTROLS {
            let words: Vec<&str> = c.example.split_whitespace().collect();
            let program = control(words[0]).expect("the example runs a listed program");
            assert!(program.switched_off(&words[1..]), "{}", c.example);
        }
    }

    #[test]
    fn reading_or_adding_rules_does_not_switch_a_control_off() {
        for command in [
            "iptables -L -n",
            "iptables -A INPUT -p tcp --dport 80 -j ACCEPT",
            "ufw allow 22/tcp",
            "ufw status",
            "nft list ruleset",
            "auditctl -l",
            "setenforce 1",
            "firewall-cmd --add-port=8443/tcp",
        ] {
            let words: Vec<&str> = command.split_whitespace().collect();
            let c = control(words[0]).unwrap();
            assert!(!c.switched_off(&words[1..]), "{command}");
        }
    }

    #[test]
    fn hardening_settings_are_named_either_way() {
        assert_eq!(
            hardening_setting("/proc/sys/kernel/randomize_va_space"),
            Some("kernel.randomize_va_space")
        );
        assert_eq!(
            hardening_setting("fs.protected_symlinks"),
            Some("fs.protected_symlinks")
        );
        assert_eq!(hardening_setting("vm.swappiness"), None);
    }
}
