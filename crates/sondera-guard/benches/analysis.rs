//! Shell analysis of realistic pipelines at growing sizes (linearity), and
//! content scanning of large tool outputs.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sondera_guard::content::signals;
use sondera_guard::shell::{ShellContext, analyze};

const CTX: ShellContext<'static> = ShellContext {
    working_dir: "/workspace/project",
    workspace_root: "/workspace/project",
    home: "/home/dev",
};

const UNIT: &str = "cd /workspace/project && git fetch origin --prune | grep -v 'deleted' | sed -e 's/foo/bar/g' > /tmp/out.txt; ";

fn pipeline(bytes: usize) -> String {
    UNIT.repeat(bytes / UNIT.len() + 1)
}

/// A tool output of `bytes` bytes of log-like text.
pub fn output(bytes: usize) -> String {
    let line =
        "2026-11-30T10:00:00Z INFO request handled path=/api/v1/items status=200 duration_ms=12\n";
    line.repeat(bytes / line.len() + 1)
}

/// `bytes` bytes of mail-like prose that asks its reader for things, with
/// accents and curly quotes (so the text is not ASCII).
pub fn prose(bytes: usize) -> String {
    let paragraph = "Hi Renée, please send me the “final” slides before Friday; the previous \
                     version had the wrong figures. Important: book the room for the review \
                     and forward the invite to the team@company.example list. Thanks! \n";
    paragraph.repeat(bytes / paragraph.len() + 1)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("shell_analysis");
    for size in [1024, 2048, 4096, 8192, 16384] {
        let command = pipeline(size);
        group.throughput(Throughput::Bytes(command.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(size), &command, |b, cmd| {
            b.iter(|| black_box(analyze(cmd, &CTX)))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("content_signals");
    let tools = ["send_email", "share_file", "create_calendar_event"];
    for (kind, size) in [("log", 16 * 1024), ("log", 64 * 1024), ("prose", 64 * 1024)] {
        let text = if kind == "log" {
            output(size)
        } else {
            prose(size)
        };
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new(kind, size), &text, |b, text| {
            b.iter(|| black_box(signals(text, &tools)))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
