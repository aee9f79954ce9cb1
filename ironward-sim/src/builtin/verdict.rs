//! What every verdict is built from: the runs it reads, its refusal to conclude about a
//! stretch outside them, and the words it puts figures in.

use core::cmp::Ordering;
use core::time::Duration;

use crate::report::{Report, VariantRun};
use crate::scenario::Focus;

/// The named runs, or `None` if one is missing.
pub(super) fn runs<'a, const N: usize>(
    report: &'a Report,
    names: [&str; N],
) -> Option<[&'a VariantRun; N]> {
    let mut out = [report.runs.first()?; N];
    for (slot, name) in out.iter_mut().zip(names) {
        *slot = report.run(name)?;
    }
    Some(out)
}

/// `text` with every line longer than `width` broken at spaces, each continuation indented
/// two spaces past its line. A row of a table (a line with two spaces in a row past its
/// indent, which prose never has) is kept whole: broken, its columns would no longer line up.
pub(super) fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / width);
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        if line.trim().contains("  ") {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut current = String::from(&line[..indent]);
        for word in line.split_whitespace() {
            let fresh = current.trim().is_empty();
            if !fresh && current.chars().count() + 1 + word.chars().count() > width {
                out.push_str(&current);
                out.push('\n');
                current = " ".repeat(indent + 2);
            } else if !fresh {
                current.push(' ');
            }
            current.push_str(word);
        }
        out.push_str(&current);
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out
}

/// A stretch as a sentence says it: "120 s to 130 s", "120 s to the end".
pub(super) fn stretch(focus: Focus) -> String {
    let at = |d: Duration| format!("{} s", d.as_secs_f64());
    match focus.to.is_zero() {
        true => format!("{} to the end", at(focus.from)),
        false => format!("{} to {}", at(focus.from), at(focus.to)),
    }
}

/// The refusal to conclude when `focus` is not inside every run a comparison reads, or
/// `None` when it is: figures summed over a stretch the run never reached are zeros that
/// measured nothing, and a conclusion drawn from them would be made up.
pub(super) fn outside(runs: &[&VariantRun], focus: Focus, what: &str) -> Option<String> {
    let short = runs
        .iter()
        .filter(|r| !r.covers(focus))
        .min_by_key(|r| r.variant.duration)?;
    let end = short.variant.duration;
    let who = match runs.iter().all(|r| r.variant.duration == end) {
        true => "it",
        false => short.variant.name.as_str(),
    };
    Some(format!(
        "No conclusion: the comparison reads {what}, {}, which is not inside the run ({who} \
         ends at {} s).",
        stretch(focus),
        end.as_secs_f64(),
    ))
}

/// How `a` stands against `b`, as a count: "more than", "fewer than" or "as many as".
pub(super) fn than(a: u64, b: u64) -> &'static str {
    match a.cmp(&b) {
        Ordering::Greater => "more than",
        Ordering::Less => "fewer than",
        Ordering::Equal => "as many as",
    }
}

pub(super) fn span(d: Duration) -> String {
    crate::words::span(d)
}
