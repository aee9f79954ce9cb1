//! Decisions sent together: the calls that wait on one connection at the same moment go to
//! Redis as one `EVALSHA` of `lua/batch.lua`, which runs each in turn and answers each.
//!
//! A pipelined decision costs Redis its script's body and, once more, the call around it:
//! the command read and parsed, the script looked up, its `KEYS` and `ARGV` made into Lua
//! tables, its reply written back. A batch pays the call once for every decision in it.
//! Nothing waits for a batch to fill: the first call to find no batch forming schedules
//! one (a task spawned on the caller's runtime) and every call queued before that task
//! runs goes with it, so a lone call is a batch of one, one task hop later than it would
//! be sent alone, and calls that arrive together (many callers pipelined on the one
//! connection) go together, at most [`BOUND`] to a batch. Each batch is sent as soon as it
//! is formed, and several may be in flight at once, pipelined as the calls were.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use redis::aio::ConnectionLike;
use redis::{Cmd, ErrorKind, RedisError, RedisResult, ServerErrorKind, ToRedisArgs, Value};
use tokio::sync::oneshot;

use crate::conn::Conn;
use crate::script::{self, Script};

/// The most decisions one batch holds: enough that the call's own cost is shared 64 ways,
/// few enough that one batch holds Redis's thread for under a millisecond (64 period
/// decisions took 0.3 to 0.7 ms, `BENCHMARKS.md`, "Redis").
pub(crate) const BOUND: usize = 64;

/// The `ironward.redis.batch.size` histogram: decisions per call to Redis.
#[cfg(feature = "metrics")]
const BATCH_SIZE: &str = "ironward.redis.batch.size";

/// One decision: a script, its keys and its arguments, gathered as redis-rs's
/// `ScriptInvocation` gathers them.
pub(crate) struct Call {
    script: Script,
    keys: Vec<Vec<u8>>,
    args: Vec<Vec<u8>>,
}

impl Script {
    /// A call of this script, with no keys and no arguments yet.
    pub(crate) fn call(self) -> Call {
        Call {
            script: self,
            keys: Vec::new(),
            args: Vec::new(),
        }
    }
}

impl Call {
    /// Adds a key: the script's next `KEYS` item.
    pub(crate) fn key<T: ToRedisArgs>(&mut self, key: T) -> &mut Self {
        key.write_redis_args(&mut self.keys);
        self
    }

    /// Adds an argument: the script's next `ARGV` item.
    pub(crate) fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        arg.write_redis_args(&mut self.args);
        self
    }

    /// The script's name, for errors, logs and metrics.
    pub(crate) fn name(&self) -> &'static str {
        self.script.name
    }
}

/// A call waiting for its batch, and where its reply goes.
struct Waiting {
    call: Call,
    reply: oneshot::Sender<RedisResult<Value>>,
}

/// The batches of one store's connection: the calls waiting for the next one, and how many
/// have been sent.
pub(crate) struct Batches {
    conn: Conn,
    /// The calls queued for the batch that is forming; not empty exactly while a flush is
    /// scheduled that has not taken them yet.
    waiting: Mutex<Vec<Waiting>>,
    /// Calls sent to Redis, each a batch of one or more decisions.
    sent: AtomicU64,
    #[cfg(feature = "metrics")]
    sizes: metrics::Histogram,
}

impl Batches {
    /// The batches of `conn`.
    pub(crate) fn new(conn: Conn) -> Arc<Self> {
        Arc::new(Self {
            conn,
            waiting: Mutex::new(Vec::new()),
            sent: AtomicU64::new(0),
            #[cfg(feature = "metrics")]
            sizes: {
                metrics::describe_histogram!(
                    BATCH_SIZE,
                    metrics::Unit::Count,
                    "Decisions in each call a store sent to Redis ({decision})"
                );
                metrics::histogram!(BATCH_SIZE)
            },
        })
    }

    /// Calls sent to Redis so far.
    pub(crate) fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Runs `call` in the next batch and gives its own reply: its script's, or the error
    /// Redis raised for it alone, or the error the whole batch met (a connection dropped,
    /// an error reply about the server), as a call of its own would have met it.
    ///
    /// On a cluster every call is a batch of one, sent at once: the decisions that wait
    /// together are most often for keys of different slots, which no one call may touch.
    pub(crate) async fn send(self: &Arc<Self>, call: Call) -> RedisResult<Value> {
        if let Conn::Cluster(_) = self.conn {
            let mut replies = self.run(&[call]).await?;
            return replies.pop().unwrap_or_else(|| Err(dropped()));
        }
        let (reply, replied) = oneshot::channel();
        let first = {
            let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
            waiting.push(Waiting { call, reply });
            waiting.len() == 1
        };
        if first {
            // A task of its own, so that a caller that gives up on its call (a timeout, a
            // drop) takes no one else's with it.
            let flush = Flush(Some(Arc::clone(self)));
            tokio::spawn(flush.run());
        }
        replied.await.unwrap_or_else(|_| Err(dropped()))
    }

    /// The calls waiting now, taken from the queue, which is left empty: the next call
    /// schedules the next flush.
    fn take(&self) -> Vec<Waiting> {
        std::mem::take(&mut *self.waiting.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Takes every waiting call and sends them, [`BOUND`] to a batch, in the order they
    /// came: the first batch from this task, the others from tasks of their own, so that
    /// they are in flight together.
    async fn flush(self: Arc<Self>) {
        let mut batch = self.take();
        if batch.len() > BOUND {
            let mut rest = batch.split_off(BOUND);
            while !rest.is_empty() {
                let more = rest.split_off(rest.len().min(BOUND));
                tokio::spawn(Arc::clone(&self).answer(rest));
                rest = more;
            }
        }
        self.answer(batch).await;
    }

    /// Sends `batch` and hands each call its reply.
    async fn answer(self: Arc<Self>, batch: Vec<Waiting>) {
        let (calls, replies): (Vec<_>, Vec<_>) = batch
            .into_iter()
            .map(|waiting| (waiting.call, waiting.reply))
            .unzip();
        match self.run(&calls).await {
            Ok(answers) => {
                for (reply, answer) in replies.into_iter().zip(answers) {
                    // A caller that gave up no longer listens.
                    let _ = reply.send(answer);
                }
            }
            Err(err) => {
                for reply in replies {
                    let _ = reply.send(Err(err.clone()));
                }
            }
        }
    }

    /// Sends `calls` as one `EVALSHA` of `lua/batch.lua` (loading the script and sending it
    /// once more if Redis answers `NOSCRIPT`), and gives each call its reply: an error
    /// about the whole call is the `Err`, an error about one decision that decision's.
    async fn run(&self, calls: &[Call]) -> RedisResult<Vec<RedisResult<Value>>> {
        let cmd = packed(calls);
        let mut conn = self.conn.clone();
        let reply = match whole(conn.req_packed_command(&cmd).await) {
            Err(err) if err.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                script::BATCH.load_async(&mut conn).await?;
                whole(conn.req_packed_command(&cmd).await)
            }
            reply => reply,
        }?;
        self.sent.fetch_add(1, Ordering::Relaxed);
        #[cfg(feature = "metrics")]
        self.sizes.record(calls.len() as f64);
        Ok(match reply {
            Value::Array(items) if items.len() == calls.len() => {
                items.into_iter().map(unpacked).collect()
            }
            // No reply the script gives: each call is handed it, and refuses it.
            other => vec![Ok(other); calls.len()],
        })
    }
}

/// A flush scheduled and not yet run. A task dropped before it runs (its runtime shut
/// down) drops the calls it would have sent, whose callers then hear [`dropped`], rather
/// than leave them queued, where no later call would schedule a flush again.
struct Flush(Option<Arc<Batches>>);

impl Flush {
    async fn run(mut self) {
        if let Some(batches) = self.0.take() {
            batches.flush().await;
        }
    }
}

impl Drop for Flush {
    fn drop(&mut self) {
        if let Some(batches) = self.0.take() {
            drop(batches.take());
        }
    }
}

/// A reply, with an error reply to the whole call as the `Err`.
fn whole(reply: RedisResult<Value>) -> RedisResult<Value> {
    match reply? {
        Value::ServerError(err) => Err(err.into()),
        reply => Ok(reply),
    }
}

/// One decision's item of a batch's reply, as its script's reply would have come alone: an
/// error reply as the `Err`, a packed list of numbers (a string of little-endian doubles,
/// which no script gives as its reply) as the list of integers Redis makes of them,
/// truncated towards zero; any other item as it is.
fn unpacked(item: Value) -> RedisResult<Value> {
    match item {
        Value::BulkString(bytes) if bytes.len() % 8 == 0 => Ok(Value::Array(
            bytes
                .chunks_exact(8)
                .map(|double| {
                    let double = f64::from_le_bytes(double.try_into().unwrap_or([0; 8]));
                    // Redis's own conversion of a Lua number: `(long long)` of the double.
                    Value::Int(double as i64)
                })
                .collect(),
        )),
        item => item.extract_error(),
    }
}

/// What a call hears when its batch was dropped before it was answered: the runtime shut
/// down under it.
fn dropped() -> RedisError {
    RedisError::from((ErrorKind::Io, "the batch was dropped before redis answered"))
}

/// The `EVALSHA` of `lua/batch.lua` for `calls`: every call's keys, then the head (each
/// call's script, number of keys and number of arguments, packed as `<BI4I4`), then every
/// call's arguments.
fn packed(calls: &[Call]) -> Cmd {
    let keys: usize = calls.iter().map(|call| call.keys.len()).sum();
    let args: usize = calls.iter().map(|call| call.args.len()).sum();
    let bytes: usize = calls
        .iter()
        .flat_map(|call| call.keys.iter().chain(&call.args))
        .map(Vec::len)
        .sum();
    let mut cmd = Cmd::with_capacity(4 + keys + args, 64 + bytes + 9 * calls.len());
    cmd.arg("EVALSHA").arg(script::BATCH.get_hash()).arg(keys);
    for call in calls {
        for key in &call.keys {
            cmd.arg(key.as_slice());
        }
    }
    let mut head = Vec::with_capacity(9 * calls.len());
    for call in calls {
        head.push(call.script.number);
        for count in [call.keys.len(), call.args.len()] {
            let count = u32::try_from(count).unwrap_or(u32::MAX);
            head.extend_from_slice(&count.to_le_bytes());
        }
    }
    cmd.arg(head);
    for call in calls {
        for arg in &call.args {
            cmd.arg(arg.as_slice());
        }
    }
    cmd
}
