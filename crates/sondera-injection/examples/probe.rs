//! Temporary: scans stdin lines, or with `rep UNIT BYTES` a unit repeated.
use std::io::BufRead;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 4 && args[1] == "rep" {
        let n: usize = args[3].parse().unwrap();
        let text = args[2].repeat(n / args[2].len() + 1);
        let r = sondera_injection::scan(&text, &[]);
        println!("{} {}", r.score, r.evidence.len());
        return;
    }
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap().replace("\\n", "\n");
        let r = sondera_injection::scan(&line, &[]);
        let feats: Vec<String> = r
            .evidence
            .iter()
            .map(|e| {
                format!(
                    "{:?}@{}",
                    e.feature,
                    line[e.span.clone()]
                        .chars()
                        .take(40)
                        .collect::<String>()
                        .replace('\n', " ")
                )
            })
            .collect();
        println!(
            "{:3} {} || {}",
            r.score,
            line.chars().take(90).collect::<String>().replace('\n', " "),
            feats.join(" | ")
        );
    }
}
