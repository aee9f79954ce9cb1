//! The rules of a reload: which new configurations apply to the stack in force, and how
//! they are applied, all or nothing.

use ironward::chaos::Injector;

use super::build::Tuners;
use super::file::{Config, Stack};

/// Why `new` cannot be applied live to a stack built from `old`, and what to do; `Ok` when
/// every section keeps its shape: the same routes, the same pieces, each rate limit of the
/// same kind, key, table size and headers. Only the numbers of a piece may change.
pub(super) fn check(old: &Config, new: &Config) -> Result<(), String> {
    // A policy read from a file was checked as it was read; one changed in code is checked
    // here, before any piece is touched.
    let sections = std::iter::once(("[server]".to_owned(), &new.server)).chain(
        new.routes
            .iter()
            .map(|(path, own)| (format!("[routes.{path:?}]"), own)),
    );
    for (section, stack) in sections {
        if let Some(chaos) = &stack.chaos {
            Injector::new(chaos.policy.clone())
                .map_err(|error| format!("in {section}, the chaos policy is refused: {error}"))?;
        }
    }
    if let Some(path) = new
        .routes
        .keys()
        .find(|path| !old.routes.contains_key(*path))
    {
        return Err(restart(format!("the route {path:?} is new")));
    }
    if let Some(path) = old
        .routes
        .keys()
        .find(|path| !new.routes.contains_key(*path))
    {
        return Err(restart(format!("the route {path:?} was removed")));
    }
    shape(&old.server, &new.server).map_err(|why| restart(format!("in [server], {why}")))?;
    for (path, own) in &old.routes {
        if let Some(new) = new.routes.get(path) {
            shape(own, new).map_err(|why| restart(format!("in [routes.{path:?}], {why}")))?;
        }
    }
    Ok(())
}

/// The advice every refusal ends with.
fn restart(why: String) -> String {
    format!(
        "{why}, which the stack in force cannot take live (only a piece's numbers can change); \
         restart the server to apply it"
    )
}

/// Why a section shaped as `new` cannot replace one shaped as `old`.
fn shape(old: &Stack, new: &Stack) -> Result<(), String> {
    piece("shed", old.shed.is_some(), new.shed.is_some())?;
    piece("quota", old.quota.is_some(), new.quota.is_some())?;
    piece("limiter", old.limiter.is_some(), new.limiter.is_some())?;
    piece("gate", old.gate.is_some(), new.gate.is_some())?;
    piece("deadline", old.deadline.is_some(), new.deadline.is_some())?;
    piece("chaos", old.chaos.is_some(), new.chaos.is_some())?;
    if let (Some(old), Some(new)) = (&old.chaos, &new.chaos) {
        // The seed and the name are the piece's numbering and label: only its policy
        // retunes.
        if old.seed != new.seed {
            return Err("the chaos `seed` changes".into());
        }
        if old.name != new.name {
            return Err("the chaos `name` changes".into());
        }
    }
    if let (Some(old), Some(new)) = (&old.quota, &new.quota) {
        if !old.limit.retunes_to(&new.limit) {
            return Err(format!(
                "the quota changes from {} to {}",
                old.limit.kind(),
                new.limit.kind()
            ));
        }
        if old.key != new.key {
            return Err("the quota's key changes".into());
        }
        if old.max_keys != new.max_keys {
            return Err("the quota's `max_keys` changes".into());
        }
        if old.headers != new.headers {
            return Err("the quota's `headers` changes".into());
        }
    }
    Ok(())
}

/// Why a piece that was `before` and is `after` cannot change so.
fn piece(name: &str, before: bool, after: bool) -> Result<(), String> {
    match (before, after) {
        (false, true) => Err(format!("`{name}` is added")),
        (true, false) => Err(format!("`{name}` is removed")),
        _ => Ok(()),
    }
}

/// Retunes every piece `tuners` holds to `new`, which [`check`] passed against the
/// configuration they were built from.
pub(super) fn apply(tuners: &[(Option<String>, Tuners)], new: &Config) {
    for (route, tuners) in tuners {
        let section = match route {
            None => Some(&new.server),
            Some(path) => new.routes.get(path),
        };
        let Some(section) = section else { continue };
        retune(tuners, section);
    }
}

/// Retunes one section's own pieces to `stack`.
fn retune(tuners: &Tuners, stack: &Stack) {
    if let (Some(tuner), Some(shed)) = (&tuners.shed, &stack.shed) {
        tuner.retune(*shed);
    }
    if let (Some(tuner), Some(quota)) = (&tuners.quota, &stack.quota) {
        // `check` compared the kinds with the rule `retune` applies, so this is never
        // refused; were it, the piece would keep its limit, and say so.
        if let Err(mismatch) = tuner.retune(quota.limit) {
            tracing::warn!(error = %mismatch, "a rate limit kept its limit on a reload");
        }
    }
    if let (Some((tuner, queue)), Some(policy)) = (&tuners.limiter, &stack.limiter) {
        tuner.retune(*policy);
        queue.retune(stack.queue);
    }
    if let (Some(tuner), Some(limit)) = (&tuners.gate, stack.gate) {
        tuner.retune(limit);
    }
    if let (Some(tuner), Some(budget)) = (&tuners.deadline, stack.deadline) {
        tuner.retune(budget);
    }
    if let (Some(piece), Some(chaos)) = (&tuners.chaos, &stack.chaos) {
        // The policy was checked when the file was read, so this is never refused; were
        // it, the piece would keep its policy, and say so. The request numbering goes on.
        if let Err(error) = piece.retune(chaos.policy.clone()) {
            tracing::warn!(%error, "a chaos piece kept its policy on a reload");
        }
    }
}
