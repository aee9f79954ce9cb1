"""Writes BENCHMARKS.md from the runs `scripts/bench` kept: run by it, after its runs or alone
with `--no-run`, with the environment it sets (RUNS_DIR, E2E_JSON, INSTRUCTIONS_JSON, MACHINE,
TOOLCHAIN, DATE, COMMAND and CONTENDED_GROUPS). `scripts/bench`'s header says what each table
holds; this file says how each figure is worked out."""

import glob
import json
import os
import pathlib
import re
import statistics
import sys
import textwrap

# The targets for ironward's median, in ns, per group; for `metered`, the ceiling on
# what a layer's metrics on add to its median with them off.
TARGETS = {
    "bucket_fake_clock": 15, "sliding": 15, "period": 15, "gate": 15,
    "backoff": 15, "deadline": 15, "budget": 15,
    "breaker": 30, "classic": 30, "shedder": 30, "limiter": 30,
    "metered": 10,
}
# Runs of a row further apart than this, (max - min) / median, flag it `unstable`.
UNSTABLE = 0.30
# With this many runs or more, the fastest and the slowest are set aside before a row's
# spread and verdict are read, so that one run disturbed by load from elsewhere does not
# decide them (the median is not moved by it either way).
TRIM_FROM = 5
CONTENDED = re.compile(os.environ["CONTENDED_GROUPS"])
# The layers the `metered` rows measure, in the order both their tables list them.
LAYERS = ["breaker", "shed", "rate_limit", "gate", "deadline"]

def layer_order(piece):
    """Where `piece` goes among the `metered` rows: LAYERS' order, any other after them."""
    return (LAYERS.index(piece) if piece in LAYERS else len(LAYERS), piece)

# Every kept run, by session (named by its start, so sorted by time) and number.
runs_dir = os.environ["RUNS_DIR"]
kept = {}  # full id -> (session, [(run, kind, pair, group, function, median)])
logs = {}  # session -> [log text]
settings = {}  # session -> {criterion's settings of its runs}
for path in sorted(glob.glob(os.path.join(runs_dir, "*", "*.json"))):
    session, name = path.split(os.sep)[-2:]
    if not name[:-5].isdigit():
        continue
    run = json.load(open(path))
    key = (session, int(name[:-5]))
    settings.setdefault(session, set()).add(run.get("settings", "not kept"))
    for id, row in run["medians"].items():
        if id not in kept or kept[id][0] < session:
            kept[id] = (session, [])
        if kept[id][0] == session:
            kept[id][1].append((key, run["kind"], run["pair"], row["group"], row["function"],
                                row["median"]))
    log = path[:-5] + ".log"
    if os.path.exists(log):
        logs.setdefault(session, []).append(pathlib.Path(log).read_text(errors="replace"))

results = {}  # (group, case) -> {crate: {run key: median ns}}
metered = {}  # piece -> {state: {pair: median ns}}
for id, (session, rows) in kept.items():
    for key, kind, pair, group, function, median in rows:
        if group == "metered":
            piece, _, state = function.partition("/")
            metered.setdefault(piece, {}).setdefault(state, {})[pair] = median
        else:
            crate, _, case = function.partition("/")
            results.setdefault((group, case), {}).setdefault(crate, {})[key] = median

# Rows whose like-for-like peer is timed once under another case's name: the deadline's cut
# alone (`deadline_without_extension`) against the same `tower/deadline` row as `deadline`.
# And a row on ironward-tokio's coarse clock (`<case>_coarse_clock`) against the peers of
# `<case>` that read no clock of ironward's: not `mutex`, the core type behind a lock, which
# reads `Instant` as ironward's `<case>` does.
BORROWED = {("layer_overhead", "deadline_without_extension"): ("layer_overhead", "deadline")}
BORROWED.update({(group, case): (group, case.removesuffix("_coarse_clock"))
                 for group, case in results if case.endswith("_coarse_clock")})
for row, source in BORROWED.items():
    if row in results and source in results:
        for crate, runs in results[source].items():
            if crate != "ironward" and not (crate == "mutex" and row[1].endswith("_coarse_clock")):
                results[row].setdefault(crate, runs)

def fmt(ns):
    return f"{ns:.2f}" if abs(ns) < 100 else f"{ns:.0f}"

def median_ns(runs):
    """The median of a row's runs (`{run: ns}`) as the tables give it, blank for none."""
    return fmt(statistics.median(runs.values())) if runs else ""

def trimmed(values):
    """A row's runs with the fastest and slowest set aside, from TRIM_FROM runs on."""
    values = sorted(values)
    return values[1:-1] if len(values) >= TRIM_FROM else values

def spread(values):
    """(max - min) / median of a row's runs, trimmed."""
    values = trimmed(values)
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle else 0.0

def pct(fraction):
    return f"{100 * fraction:.0f}"

def sort_key(item):
    (group, case), _ = item
    parts = case.split("/")
    return (group, [p.zfill(8) if p.isdigit() else p for p in parts])
# The classic breaker's groups (target `classic`, and `peers` for throttle-net's and
# tower-resilience's rows) follow the SRE breaker's: `classic` (the decision alone, at a `now`
# given, with the `breaker` group's target) and `classic_real_clock` have failsafe (and the
# latter throttle-net) for peers, `layer_classic_breaker` tower-resilience and the layer over
# `Mutex<ClassicBreaker>` (`mutex`), `shared_classic_2_threads` failsafe and `mutex`. The
# real-clock, layer and thread groups have no target, as the SRE breaker's have none.
# `layer_stack` (target `stack`: the server stack as one layer, beside the same layers
# stacked by hand and tower's four) follows the layers, with no target.
# The front door's groups (target `call`: `call_retry` beside backon and tokio-retry,
# `call_breaker` and `call_classic` beside failsafe) come after the layers, a whole call an
# element, with no target: what they answer to is the ratio to each peer.
order = ["bucket_fake_clock", "bucket_real_clock", "sliding", "period", "gate", "deadline",
         "backoff", "budget", "breaker", "breaker_real_clock", "classic", "classic_real_clock",
         "shedder", "limiter", "ward_connect", "ward_backoff", "ward_gate", "http_date",
         "layer_rate_limit", "layer_concurrency", "layer_breaker", "layer_classic_breaker",
         "layer_overhead", "layer_stack", "call_retry", "call_breaker", "call_classic",
         "shared_bucket_2_threads", "shared_period_2_threads", "shared_gate_2_threads",
         "shared_budget_2_threads", "shared_breaker_2_threads", "shared_classic_2_threads",
         "shared_shedder_2_threads", "unshared_2_threads"]
items = sorted(results.items(), key=lambda item: (
    order.index(item[0][0]) if item[0][0] in order else len(order), sort_key(item)))

table = []
verdicts = {"under": [], "tie": [], "over": [], "unpaired": []}
unstable, missed = [], []
run_counts = {"contended": set(), "other": set()}
for (group, case), crates in items:
    ours = crates.get("ironward", {})
    ours_median = statistics.median(ours.values()) if ours else None
    peers = sorted(k for k in crates if k != "ironward") or [None]
    target = TARGETS.get(group)
    target_verdict = ""
    if target is not None and ours_median is not None:
        met = ours_median <= target
        target_verdict = f"≤ {target}: {'met' if met else 'MISSED'}"
        if not met:
            missed.append(f"{group} {case}")
    for peer in peers:
        theirs = crates.get(peer, {}) if peer else {}
        name = f"{group} {case}" + (f" vs {peer}" if peer else "")
        spreads = [spread(list(runs.values())) for runs in (ours, theirs) if runs]
        shaky = any(s > UNSTABLE for s in spreads)
        paired = [ours[key] / theirs[key] for key in ours if key in theirs and theirs[key]]
        ratio, verdict, count = "", "", len(ours) or len(theirs)
        if peer and ours and theirs:
            if paired:
                count = len(paired)
                ratio = f"{statistics.median(paired):.2f}"
                weighed = trimmed(paired)
                verdict = ("under" if all(r < 1 for r in weighed)
                           else "over" if all(r > 1 for r in weighed) else "tie")
            else:
                ratio = f"{ours_median / statistics.median(theirs.values()):.2f}"
                verdict = "unpaired"
            verdicts[verdict].append(name)
        if shaky:
            unstable.append(name)
            verdict = f"{verdict}, unstable" if verdict else "unstable"
        run_counts["contended" if CONTENDED.fullmatch(group) else "other"].add(count)
        width = lambda runs: pct(spread(list(runs.values()))) if runs else ""
        table.append(
            f"| {group} | {case} | {median_ns(ours)} | {width(ours)} | {peer or '—'} | "
            f"{median_ns(theirs)} | {width(theirs)} | {ratio} | {count} | {verdict} | "
            f"{target_verdict} |"
        )

# Pinning, as the threads harness said in the logs of the sessions kept, and criterion's
# settings in them.
sessions = {session for session, _ in kept.values()}
said = "\n".join(text for session in sessions for text in logs.get(session, []))
used = " or ".join(f"`{s}`" for s in sorted(set().union(*(settings[s] for s in sessions))))
if "workers unpinned" in said:
    pinning = "off (the machine did not allow it; workers ran unpinned)"
elif "workers pinned" in said:
    found = re.search(r"workers pinned one to a core, (.*)", said)
    pinning = "on, " + found.group(1).rstrip()
else:
    pinning = "not known (no thread bench in the runs kept)"

def counts(kind):
    seen = sorted(run_counts[kind])
    if not seen:
        return "none"
    return f"{seen[0]}" if len(seen) == 1 else f"{seen[0]} to {seen[-1]}"

pair_counts = sorted({len(states.get("off", {}).keys() & states.get("on", {}).keys())
                      for states in metered.values()})
def listed(names):
    """`names` (`group case[ vs peer]`) by group: `group: case vs peer, ...; group: ...`."""
    by_group = {}
    for name in names:
        group, _, rest = name.partition(" ")
        by_group.setdefault(group, []).append(rest)
    return "; ".join(f"{group}: {', '.join(rest)}" for group, rest in by_group.items()) or "none"

lines = [
    "# Benchmarks",
    "",
    "Generated by `scripts/bench`; do not edit above \"## Analysis\", rerun the script.",
    "",
    f"- Machine: {os.environ['MACHINE']}",
    f"- Toolchain: {os.environ['TOOLCHAIN']}",
    f"- Date: {os.environ['DATE']}",
    f"- Reproduce: `{os.environ['COMMAND']}`",
    "",
    "## Summary",
    "",
    f"- Runs: {counts('contended')} of each contended row (`shared_*_2_threads`, "
    f"`unshared_2_threads`), {counts('other')} of every other row, "
    f"{'/'.join(map(str, pair_counts)) or 'no'} interleaved pairs of `metered` (off, on), "
    f"`e2e` once; each function under criterion's SETTINGS {used or 'none'}.",
    f"- Thread pinning: {pinning}.",
    f"- Rows beside a peer: {len(verdicts['under'])} under, {len(verdicts['tie'])} tie, "
    f"{len(verdicts['over'])} over"
    + (f", {len(verdicts['unpaired'])} unpaired" if verdicts["unpaired"] else "") + ".",
    f"- Targets missed: {listed(missed)}.",
    f"- Over their peer in every run: {listed(verdicts['over'])}.",
    f"- Unstable (runs more than {pct(UNSTABLE)} % apart), not to be quoted: {listed(unstable)}.",
    "",
    f"Every other row's figures held within {pct(UNSTABLE)} % over its runs: those are the ones "
    "to quote.",
    "",
    "Median time per decision (one decision an element): the median over the runs of",
    "criterion's median point estimate in each. Spread is (max − min) / median of a row's",
    "runs, in %. Ratio is the median over the runs of ironward's median over the peer's in",
    "that run (both measured in the same run): below 1 means ironward is faster. Verdict:",
    "`under` when every run's ratio is below 1, `over` when every one is above, `tie`",
    f"otherwise; `unstable` when ironward's or the peer's spread is over {pct(UNSTABLE)} %.",
    f"From {TRIM_FROM} runs on, a row's fastest and slowest runs are set aside for its spread",
    "and verdict, so that one run disturbed by load from elsewhere decides neither.",
    "Target is the ceiling set for ironward's median, where one applies.",
    "",
    "| group | case | ironward ns | spread % | peer | peer ns | spread % | ratio | runs "
    "| verdict | target |",
    "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- | --- |",
    *table,
]

# `metered` ids are `<piece>/<off|on|counted>`, the state standing where a crate stands
# elsewhere; each state's runs by pair, an `on` (and `counted`) run right after its `off`.
if metered:
    target = TARGETS["metered"]
    lines += [
        "",
        "Each layer of `layer_overhead` built without ironward-tower's `metrics` feature (off)",
        "and with it, recording to a recorder of no-op handles (on) and of counting atomic",
        "handles (counted): two builds of the `metered` target, run in pairs, off then on, one",
        "pair after each run of the rest. States are the median of their runs; a difference is",
        "the median over the pairs of that pair's difference, with the least and greatest. The",
        "target is the ceiling on the median of on less off.",
        "",
        "| group | layer | off ns | on ns | on − off ns | range ns | pairs | target | counted ns "
        "| counted − off ns |",
        "| --- | --- | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: |",
    ]
    for piece in sorted(metered, key=layer_order):
        states = metered[piece]
        off, on, counted = (states.get(state, {}) for state in ("off", "on", "counted"))
        on_less = [on[p] - off[p] for p in sorted(on.keys() & off.keys())]
        counted_less = [counted[p] - off[p] for p in sorted(counted.keys() & off.keys())]
        difference, range_, verdict, counted_difference = "", "", "", ""
        if on_less:
            middle = statistics.median(on_less)
            difference = f"{middle:+.2f}"
            range_ = f"{min(on_less):+.2f} to {max(on_less):+.2f}"
            verdict = f"≤ {target}: {'met' if middle <= target else 'MISSED'}"
        if counted_less:
            counted_difference = f"{statistics.median(counted_less):+.2f}"
        lines.append(
            f"| metered | {piece} | {median_ns(off)} | {median_ns(on)} | {difference} | {range_} | "
            f"{len(on_less)} | {verdict} | {median_ns(counted)} | {counted_difference} |"
        )

# `instructions`: callgrind's count of each row at two lap counts, a lap the difference over
# the laps between them; rows `<group>/<group>_<crate>/<case>`, `metered` per build.
counted_path = pathlib.Path(os.environ["INSTRUCTIONS_JSON"])
counted_runs = json.loads(counted_path.read_text()) if counted_path.exists() else {}

def per_lap(totals):
    (few, low), (many, high) = sorted((int(laps), total) for laps, total in totals.items())
    return (high - low) / (many - few)

instructions = {state: {row: per_lap(totals) for row, totals in rows.items()}
                for state, rows in counted_runs.items()}
if instructions:
    lines += [
        "",
        "Instructions per decision, counted by callgrind (target `instructions`, through",
        "gungraun): the same on every run of the same build, where the times above move with",
        "the machine's load. Each row runs at two lap counts in a process of its own and a lap",
        "is the difference over the laps between them, so that what a run does once drops",
        "out. The workloads are their timed rows' on one thread; a core breaker row reads",
        "its clock once for a call asked and passed, a shared one when the call is asked and",
        "when it is passed, on the manual clock (time passed in) but for `_coarse_clock` and",
        "`_monotonic_clock` (the system's clock, whose cost on a virtual machine is mostly",
        "not in its instructions). A peer's row is its case without the clock.",
        "",
        "| group | case | ironward | instructions | peer | instructions | ratio |",
        "| --- | --- | --- | ---: | --- | ---: | ---: |",
    ]
    decisions = {}  # (group, case) -> {function: count}
    for row, count in instructions.get("off", {}).items():
        group, function, case = row.split("/")
        if group != "layers":
            decisions.setdefault((group, case), {})[function.removeprefix(group + "_")] = count
    for (group, case), counts in sorted(decisions.items()):
        base = case.removesuffix("_coarse_clock").removesuffix("_monotonic_clock")
        peers = {crate: count for crate, count in decisions.get((group, base), {}).items()
                 if not crate.startswith("ironward")}
        for ours in sorted(crate for crate in counts if crate.startswith("ironward")):
            for peer, theirs in sorted(peers.items()) or [("—", None)]:
                ratio = f"{counts[ours] / theirs:.2f}" if theirs else ""
                shown = f"{theirs:.0f}" if theirs is not None else ""
                lines.append(f"| {group} | {case} | {ours.replace('_', ' ')} | "
                             f"{counts[ours]:.0f} | {peer} | {shown} | {ratio} |")
    layered = {state: {row.split("/")[2]: count for row, count in rows.items()
                       if row.startswith("layers/")}
               for state, rows in instructions.items()}
    off, on = layered.get("off", {}), layered.get("on", {})
    if off:
        lines += [
            "",
            "The layers of `metered` by instruction count, one request each, in the build without",
            "ironward-tower's `metrics` feature (off) and with it, no recorder installed, so that",
            "every handle is `metrics`' no-op one (on):",
            "",
            "| group | layer | off | on | on − off |",
            "| --- | --- | ---: | ---: | ---: |",
        ]
        for piece in sorted(off, key=layer_order):
            difference = f"{on[piece] - off[piece]:+.0f}" if piece in on else ""
            shown = f"{on[piece]:.0f}" if piece in on else ""
            lines.append(f"| metered | {piece} | {off[piece]:.0f} | {shown} | {difference} |")

# `e2e`: one run of the `e2e` target, its variants in the order it ran them.
e2e_path = pathlib.Path(os.environ["E2E_JSON"])
e2e = json.loads(e2e_path.read_text()) if e2e_path.exists() else None
if e2e:
    intro = (
        f"End to end (target `e2e`): a real axum server on loopback, {e2e['clients']} peers (each "
        f"its own source address) each offering {e2e['offered_per_client']:.0f} requests a second "
        f"on a schedule (open loop), under a quota of {e2e['quota_rate']:g} a second and a burst "
        f"of {e2e['quota_burst']} a peer: no limiter, ironward-tower's `ProtectLayer` with "
        "`QuotaLayer::by_peer` (a token bucket), and tower_governor's `GovernorLayer` on its "
        f"peer-IP key (governor's GCRA), taking turns for {e2e['run_seconds']:g} s each in "
        f"{e2e['rounds']} round{'s' if e2e['rounds'] != 1 else ''}. The server (two workers) and the generator (one thread) share "
        f"the {e2e['cores']} cores. Rates and percentiles are the median of the rounds', counts "
        "the sum. Latency is from a request's send to the end of its response's body, over every "
        "answer (200 and 429). The promise is what the quota admits a peer between its first and "
        "last arrival at the server (recorded by a layer outside the limiter), burst + ⌊rate · "
        "span⌋, summed over the peers and rounds; the target is the 200s within 1 % of it. Ratio is the completed rate over tower_governor's. Server CPU is the "
        "time the server's threads ran on a CPU (`/proc` schedstat) per request served: what "
        "sets the rate a server alone could sustain, which the completed rate, at a load below "
        "it, cannot show."
    )
    lines += [
        "",
        *textwrap.wrap(intro, width=92, break_on_hyphens=False),
        "",
        "| variant | offered req/s | completed req/s | ratio | server CPU µs/req | p50 µs | p99 µs "
        "| 200 | 429 | other | promise | 200 / promise | target |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    peer = next((v for v in e2e["variants"] if v["name"] == "tower_governor"), None)
    for v in e2e["variants"]:
        ratio = f"{v['completed_rps'] / peer['completed_rps']:.3f}" if peer and v is not peer else ""
        share = v["admitted_of_promise_pct"]
        promise, of_promise, verdict = "", "", ""
        if share is not None:
            promise = str(v["promise"])
            of_promise = f"{share:.2f} %"
            verdict = f"±1 %: {'met' if abs(share - 100) <= 1 else 'MISSED'}"
        cpu = v.get("server_cpu_us_per_request")
        cpu = f"{cpu:.1f}" if cpu is not None else ""
        lines.append(
            f"| {v['name']} | {v['offered_rps']:.0f} | {v['completed_rps']:.0f} | {ratio} | {cpu} | "
            f"{v['p50_us']:.0f} | {v['p99_us']:.0f} | {v['admitted']} | {v['refused']} | "
            f"{v['other']} | {promise} | {of_promise} | {verdict} |"
        )

out = pathlib.Path("BENCHMARKS.md")
tail = ""
if out.exists():
    text = out.read_text()
    at = text.find("\n## Analysis")
    if at >= 0:
        tail = text[at:]
    else:
        print(f"warning: {out} has no '## Analysis' heading; writing the table alone",
              file=sys.stderr)
out.write_text("\n".join(lines) + "\n" + (tail if tail else ""))
print(f"wrote {out} ({len(table)} rows, {len(metered)} metered layers, "
      f"{len(e2e['variants']) if e2e else 0} e2e variants)")
