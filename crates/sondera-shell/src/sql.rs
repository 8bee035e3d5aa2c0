//! What SQL handed to a database client does, read by parsing it.
//!
//! A client takes its statements in an option (`psql -c`, `mysql -e`,
//! `sqlcmd -Q`, `clickhouse-client --query`), an operand (`sqlite3 DB
//! SQL`) or its input (a here-document). Every such text is parsed with
//! `sqlparser`; statements that destroy data are facts: `DROP`,
//! `TRUNCATE`, and `DELETE` or `UPDATE` of a whole table (no `WHERE`, or
//! one that holds for every row, such as `WHERE 1=1`). Text the parser
//! does not accept (a dialect's own syntax, a script mixing client
//! commands) is scanned for the same statements by keyword, so what cannot
//! be parsed is never taken as harmless.

use sqlparser::ast::{AlterTableOperation, BinaryOperator, Expr, FromTable, Statement, Value};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

/// Statement keywords that make a text worth parsing as SQL.
const STATEMENT_STARTS: &[&str] = &[
    "DROP", "TRUNCATE", "DELETE", "UPDATE", "ALTER", "SELECT", "INSERT", "CREATE", "WITH", "BEGIN",
    "GRANT", "REPLACE", "MERGE",
];

/// Why `text`, given to a database client, destroys data; `None` when it
/// does not, or is not SQL.
pub(super) fn destroys(text: &str) -> Option<String> {
    let trimmed = text.trim_start();
    let first = trimmed
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("")
        .to_ascii_uppercase();
    if !STATEMENT_STARTS.contains(&first.as_str()) && !trimmed.contains(';') {
        return None;
    }
    match Parser::parse_sql(&GenericDialect {}, text) {
        Ok(statements) => statements.iter().find_map(destructive_statement),
        Err(_) => by_keyword(text),
    }
}

fn destructive_statement(statement: &Statement) -> Option<String> {
    match statement {
        Statement::Drop { object_type, .. } => Some(format!("DROP {object_type}")),
        Statement::Truncate(_) => Some("TRUNCATE".into()),
        Statement::Delete(delete) => {
            let table = match &delete.from {
                FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t
                    .first()
                    .map(|t| t.relation.to_string())
                    .unwrap_or_default(),
            };
            every_row(delete.selection.as_ref()).then(|| format!("DELETE of every row of {table}"))
        }
        Statement::Update(update) => every_row(update.selection.as_ref())
            .then(|| format!("UPDATE of every row of {}", update.table.relation)),
        Statement::AlterTable(alter) => alter
            .operations
            .iter()
            .any(|op| {
                matches!(
                    op,
                    AlterTableOperation::DropColumn { .. }
                        | AlterTableOperation::DropPartitions { .. }
                )
            })
            .then(|| format!("ALTER TABLE {} drops data", alter.name)),
        _ => None,
    }
}

/// Whether a `WHERE` clause (or its absence) selects every row.
fn every_row(selection: Option<&Expr>) -> bool {
    selection.is_none_or(always_true)
}

/// Whether `expr` holds whatever the row: a true constant, a non-zero
/// number, `x = x`, or a disjunction with such a side.
fn always_true(expr: &Expr) -> bool {
    match expr {
        Expr::Value(v) => match &v.value {
            Value::Boolean(b) => *b,
            Value::Number(n, _) => n.parse::<f64>().is_ok_and(|n| n != 0.0),
            _ => false,
        },
        Expr::Nested(inner) => always_true(inner),
        Expr::BinaryOp { left, op, right } => match op {
            BinaryOperator::Or => always_true(left) || always_true(right),
            BinaryOperator::And => always_true(left) && always_true(right),
            BinaryOperator::Eq | BinaryOperator::GtEq | BinaryOperator::LtEq => left == right,
            _ => false,
        },
        Expr::IsNotNull(inner) => {
            matches!(inner.as_ref(), Expr::Value(v) if !matches!(v.value, Value::Null))
        }
        _ => false,
    }
}

/// The keyword reading of text the parser did not accept.
fn by_keyword(text: &str) -> Option<String> {
    let upper = text.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    if has("DROP") || has("TRUNCATE") {
        return Some("DROP or TRUNCATE (not parsed)".into());
    }
    let whole = |verb: &str| {
        words.iter().enumerate().any(|(n, w)| {
            *w == verb && {
                let rest = &words[n + 1..];
                match rest.iter().position(|w| *w == "WHERE") {
                    None => true,
                    Some(at) => matches!(
                        rest.get(at + 1..at + 3),
                        Some(["1", "1"]) | Some(["TRUE", ..])
                    ),
                }
            }
        })
    };
    (whole("DELETE") || whole("UPDATE"))
        .then(|| "DELETE or UPDATE of every row (not parsed)".into())
}

#[cfg(test)]
mod tests {
    use super::destroys;

    #[test]
    fn destructive_statements_are_found() {
        for sql in [
            "DROP TABLE users",
            "drop schema public cascade",
            "TRUNCATE orders",
            "DELETE FROM users",
            "delete from users where 1=1",
            "UPDATE accounts SET balance = 0",
            "update t set x = 1 where true or id = 3",
            "SELECT 1; DROP DATABASE shop;",
            "ALTER TABLE events DELETE WHERE 1=1",
            "ALTER TABLE users DROP COLUMN email",
        ] {
            assert!(destroys(sql).is_some(), "{sql}");
        }
    }

    #[test]
    fn ordinary_statements_are_not() {
        for sql in [
            "SELECT count(*) FROM users",
            "DELETE FROM sessions WHERE expires_at < NOW()",
            "UPDATE users SET name = 'x' WHERE id = 3",
            "INSERT INTO t VALUES (1)",
            "CREATE TABLE t (id int)",
            "app.db",
            "--host=db",
            "\\dt",
        ] {
            assert!(destroys(sql).is_none(), "{sql}");
        }
    }
}
