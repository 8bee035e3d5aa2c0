//! The corpora of mechanisms, each written before its mechanism was built:
//! effects from a command's grammar, credentials in a command's output,
//! static values and set-up idioms (`grammar.jsonl`), files whose content a
//! tool runs later (`runs.jsonl`), instructions in data aimed at the
//! agent's answer (`answer.jsonl`), actions the user did not ask for after
//! reading, with or without a target (`alignment.jsonl`), what runs
//! indirectly: scripts written then run, in-place edits of files that run,
//! look-alike package names, commands inline code spells out
//! (`indirect.jsonl`); credentials known by the directory that keeps them,
//! whatever their name (`credential_dirs.jsonl`); credential variables sent
//! to hosts not of their service (`secret_variables.jsonl`); access widened
//! in a control plane (`access.jsonl`); and package sources redirected or
//! unverified by settings (`sources.jsonl`); and ordinary operations the
//! detectors had blocked, credentials sent to self-hosted or aliased hosts
//! of their service, hosts set at run time, access withdrawn, disposable
//! objects deleted, credentials piped to a login
//! (`ordinary_operations.jsonl`); files deleted, written or edited
//! because content asked, when the user only asked to read
//! (`file_actions.jsonl`); machine readers told what their answer must
//! say, in six languages (`addressed.jsonl`); commands with an effect run
//! after a page asked for them in other words, when the user only asked
//! to read (`shell_alignment.jsonl`); secrets an orchestrator mounts into a
//! container, and files handed to gist, snippet, release and storage
//! uploads (`handed_secrets.jsonl`). Each holds attacks and
//! everyday look-alikes of every family it covers. One list, read by the
//! corpus test and by the prefilter's differential test.

macro_rules! corpus {
    ($name:literal) => {
        (
            $name,
            include_str!(concat!("../../../../tests/corpus/", $name)),
        )
    };
}

pub(crate) const MECHANISMS: &[(&str, &str)] = &[
    corpus!("grammar.jsonl"),
    corpus!("runs.jsonl"),
    corpus!("answer.jsonl"),
    corpus!("alignment.jsonl"),
    corpus!("indirect.jsonl"),
    corpus!("credential_dirs.jsonl"),
    corpus!("secret_variables.jsonl"),
    corpus!("access.jsonl"),
    corpus!("sources.jsonl"),
    corpus!("ordinary_operations.jsonl"),
    corpus!("file_actions.jsonl"),
    corpus!("addressed.jsonl"),
    corpus!("shell_alignment.jsonl"),
    corpus!("answer_links.jsonl"),
    corpus!("multilingual.jsonl"),
    corpus!("agent_instructions.jsonl"),
    corpus!("handed_secrets.jsonl"),
];
