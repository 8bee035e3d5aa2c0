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

/// Layer 2 of injection defence: the provenance facts of a side-effecting
/// call against a trajectory that has seen its full budget of values, and
/// folding an email listing into that state.
fn provenance(c: &mut Criterion) {
    use sondera_guard::provenance::{Read, fold, of_call};
    use sondera_model::Payload;
    use sondera_model::provenance::Provenance;

    let inbox: Vec<serde_json::Value> = (0..40)
        .map(|i| {
            serde_json::json!({
                "id": format!("msg-{i}"),
                "from": format!("sender{i}@mail{i}.example"),
                "body": format!("Hi, the invoice INV-{i} of ${i}00.00 is due; pay to DE89370400440532013{i:03} or see https://portal{i}.example/pay. Call +44 20 7946 0{i:03}."),
            })
        })
        .collect();
    let output = Payload::ToolOutput {
        call_id: "c1".into(),
        success: true,
        output: serde_json::json!({ "emails": inbox }),
        error: None,
    };
    let prompt = Payload::Prompt {
        role: sondera_model::PromptRole::User,
        content: "Summarize my inbox and reply to Bob at bob@corp.example".into(),
    };
    let mut state = Provenance::default();
    fold(&mut state, &prompt, None, Read::default());
    for n in 0..8 {
        fold(
            &mut state,
            &output,
            Some((&format!("c{n}"), "read_inbox")),
            Read {
                flagged: n == 7,
                ..Read::default()
            },
        );
    }
    let arguments = serde_json::json!({
        "to": "sender7@mail7.example",
        "cc": ["bob@corp.example"],
        "subject": "Re: invoice",
        "body": "Thanks, paid via https://portal7.example/pay today.",
    });
    let mut group = c.benchmark_group("provenance");
    group.bench_function("of_call/send_email", |b| {
        b.iter(|| black_box(of_call(&state, "send_email", &arguments)))
    });
    group.bench_function("fold/inbox_40_emails", |b| {
        b.iter(|| {
            let mut s = state.clone();
            fold(&mut s, &output, Some(("c9", "read_inbox")), Read::default());
            black_box(s)
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench, provenance
}
criterion_main!(benches);
