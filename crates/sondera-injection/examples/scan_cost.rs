//! What scanning costs, for counting with callgrind (instruction counts do
//! not move with load):
//!
//! - `scan_cost first [TEXT]`: one scan in a fresh process, building
//!   included: `valgrind --tool=callgrind target/release/examples/scan_cost first`.
//! - `scan_cost warm prose|log N [BYTES]`: one scan to build, then N scans
//!   of BYTES (64 KiB by default) of that text; the difference between two
//!   values of N, divided, is one warm scan.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("warm") => {
            let bytes: usize = args
                .get(3)
                .and_then(|n| n.parse().ok())
                .unwrap_or(64 * 1024);
            let mut text = match args.get(1).map(String::as_str) {
                Some("log") => log(bytes),
                _ => prose(bytes),
            };
            let mut end = bytes.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            let times: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(10);
            sondera_injection::scan("warm up", &[]);
            let mut found = 0;
            for _ in 0..times {
                found += sondera_injection::scan(&text, &["send_email"])
                    .evidence
                    .len();
            }
            println!("{found} pieces of evidence");
        }
        _ => {
            let text = args
                .get(1)
                .cloned()
                .unwrap_or_else(|| "ls -la && cargo build --release".to_string());
            let report = sondera_injection::scan(&text, &[]);
            println!("{}", report.tags().join(","));
        }
    }
}

/// `bytes` of log lines.
fn log(bytes: usize) -> String {
    let line =
        "2026-11-30T10:00:00Z INFO request handled path=/api/v1/items status=200 duration_ms=12\n";
    line.repeat(bytes / line.len() + 1)
}

/// `bytes` of mail-like prose that asks its reader for things, not ASCII.
fn prose(bytes: usize) -> String {
    let paragraph = "Hi Renée, please send me the “final” slides before Friday; the previous \
                     version had the wrong figures. Important: book the room for the review \
                     and forward the invite to the team@company.example list. Thanks! \n";
    paragraph.repeat(bytes / paragraph.len() + 1)
}
