//! Message bus benchmarks. Run with `cargo bench -p agents-core --bench bus` (release profile);
//! prints markdown tables.
//!
//! 1. **Memory per idle subscription**: 10,000 agent subscriptions (the runtime's agent filter:
//!    own id as recipient, `AgentSpoke` / `TaskAssigned` / `CollaborationRequested`, broadcasts
//!    accepted). Measured two ways: bytes live in the heap (a counting global allocator: requested
//!    sizes, without the allocator's own overhead), and resident memory (`/proc/self/statm`,
//!    before / after, page granularity, includes allocator overhead). Target: ≤ ~1 KiB.
//! 2. **Publish cost** with those 10,000 subscriptions: a message addressed to one agent (the
//!    index finds the one candidate), a broadcast `AgentSpoke` every agent accepts, and for
//!    comparison the cost of merely evaluating 10,000 filters (what a non-indexed bus would pay).
//! 3. **Delivery latency**: 1,000 subscribers, each a tokio task on a 2-worker multi-thread runtime
//!    looping on `recv` and recording `now - envelope.published_at`; a publisher thread publishes
//!    broadcast `AgentMoved` messages at a steady rate. Target: p99 < 1 ms, no lag.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use agents_core::bus::{Bus, BusMessage, Filter, MessageKind, Received, Subscription};
use agents_core::runtime::Position;

/// Counts live heap bytes while `COUNTING` is on.
struct CountingAlloc;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicI64 = AtomicI64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; only a counter is added.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        }
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        }
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        }
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

const AGENTS: usize = 10_000;

fn agent_id(i: usize) -> String {
    format!("agent_{:05}", i + 1)
}

fn agent_filter(id: &str) -> Filter {
    Filter::all()
        .recipients([id])
        .kinds([
            MessageKind::AgentSpoke,
            MessageKind::TaskAssigned,
            MessageKind::CollaborationRequested,
        ])
        .with_broadcasts(true)
}

fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let resident: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(resident * 4096)
}

fn spoke(from: &str, to: Option<&str>) -> BusMessage {
    BusMessage::AgentSpoke {
        agent_id: from.to_string(),
        content: "Could you bring the flour to the bakery?".to_string(),
        recipients: to.map(|t| vec![t.to_string()]).unwrap_or_default(),
        dialog_type: "chat".to_string(),
        inbox_id: None,
    }
}

fn drain_all(subs: &mut [Subscription]) -> u64 {
    let mut n = 0;
    for s in subs {
        while let Some(r) = s.try_recv() {
            if let Received::Message(_) = r {
                n += 1;
            }
        }
    }
    n
}

fn memory(bus: &Bus) -> Vec<Subscription> {
    let ids: Vec<String> = (0..AGENTS).map(agent_id).collect();
    let rss_before = rss_bytes();
    LIVE.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    let subs: Vec<Subscription> = ids
        .iter()
        .map(|id| bus.subscribe(agent_filter(id)))
        .collect();
    COUNTING.store(false, Ordering::Relaxed);
    let live = LIVE.load(Ordering::Relaxed);
    let rss_after = rss_bytes();
    // The Vec<Subscription> holding them is the caller's, not the bus's.
    let holder = (subs.capacity() * size_of::<Subscription>()) as i64;
    let heap_per = (live - holder) as f64 / AGENTS as f64;
    println!("### Memory per idle subscription ({AGENTS} agent subscriptions)\n");
    println!("| method | bytes per subscription |");
    println!("|---|---:|");
    println!(
        "| heap bytes live (counting allocator; filter + queue state + index entries) | {heap_per:.0} |"
    );
    match (rss_before, rss_after) {
        (Some(b), Some(a)) => println!(
            "| resident memory (`/proc/self/statm` after − before, incl. allocator overhead and the holding Vec) | {:.0} |",
            (a as f64 - b as f64) / AGENTS as f64
        ),
        _ => println!("| resident memory | (no /proc/self/statm) |"),
    }
    println!();
    subs
}

fn publish_cost(bus: &Bus, subs: &mut [Subscription]) {
    const BATCHES: usize = 40;
    let ids: Vec<String> = (0..AGENTS).map(agent_id).collect();

    // Addressed to one agent: rotate over every agent.
    let mut addressed = Duration::ZERO;
    let mut delivered = 0u64;
    for b in 0..BATCHES {
        let msgs: Vec<BusMessage> = (0..AGENTS)
            .map(|i| spoke(&ids[(i + b + 1) % AGENTS], Some(&ids[i])))
            .collect();
        let t = Instant::now();
        for m in msgs {
            delivered += black_box(bus.publish(m)).delivered as u64;
        }
        addressed += t.elapsed();
        drain_all(subs);
    }
    let n_addressed = (BATCHES * AGENTS) as f64;
    assert_eq!(delivered, (BATCHES * AGENTS) as u64, "one delivery each");

    // Broadcast speech: every agent accepts it.
    const BROADCASTS: usize = 200;
    let mut broadcast = Duration::ZERO;
    for i in 0..BROADCASTS {
        let m = spoke(&ids[i % AGENTS], None);
        let t = Instant::now();
        let r = black_box(bus.publish(m));
        broadcast += t.elapsed();
        assert_eq!(r.delivered, AGENTS);
        if i % 100 == 99 {
            drain_all(subs);
        }
    }
    drain_all(subs);

    // What a bus without an index would pay just to evaluate every filter once per message.
    let filters: Vec<Filter> = subs.iter().map(|s| s.filter().clone()).collect();
    let probe = spoke(&ids[1], Some(&ids[AGENTS / 2]));
    const SCANS: usize = 200;
    let t = Instant::now();
    let mut hits = 0usize;
    for _ in 0..SCANS {
        hits += filters
            .iter()
            .filter(|f| f.matches(black_box(&probe)))
            .count();
    }
    let scan = t.elapsed();
    assert_eq!(hits, SCANS);

    println!("### Publish cost with {AGENTS} agent subscriptions\n");
    println!("| publish | ns per publish | deliveries per publish |");
    println!("|---|---:|---:|");
    println!(
        "| `AgentSpoke` addressed to one agent (indexed) | {:.0} | 1 |",
        addressed.as_nanos() as f64 / n_addressed
    );
    println!(
        "| broadcast `AgentSpoke` (every agent accepts it) | {:.0} | {AGENTS} ({:.1} ns per delivery) |",
        broadcast.as_nanos() as f64 / BROADCASTS as f64,
        broadcast.as_nanos() as f64 / (BROADCASTS * AGENTS) as f64
    );
    println!(
        "| for comparison: evaluating all {AGENTS} filters (no index) | {:.0} | — |",
        scan.as_nanos() as f64 / SCANS as f64
    );
    println!();
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Where the latency benchmark's publisher runs.
#[derive(Clone, Copy)]
enum Publisher {
    /// A plain thread outside the runtime (like Godot's main thread), paced by sleep + spin.
    Thread,
    /// A tokio task on the same runtime (like an agent), paced by `tokio::time::sleep_until`.
    Task,
}

/// The `i`-th broadcast move the latency publisher sends.
fn nth_move(i: usize) -> BusMessage {
    BusMessage::AgentMoved {
        agent_id: "agent_00001".to_string(),
        from: Position::new(i as f64, 0.0),
        to: Position::new(i as f64 + 1.0, 0.0),
    }
}

fn latency(subscribers: usize, messages: usize, period: Duration, publisher: Publisher) {
    const WARMUP: u64 = 200;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let bus = Bus::new(1024);
    let tasks: Vec<_> = (0..subscribers)
        .map(|_| {
            let mut sub = bus.subscribe(Filter::all().kinds([MessageKind::AgentMoved]));
            rt.spawn(async move {
                let mut lat = Vec::with_capacity(messages);
                let mut lagged = 0u64;
                while let Some(r) = sub.recv().await {
                    match r {
                        Received::Message(e) => {
                            let ns = e.published_at.elapsed().as_nanos() as u64;
                            if e.seq > WARMUP {
                                lat.push(ns);
                            }
                        }
                        Received::Lagged { missed } => lagged += missed,
                    }
                }
                (lat, lagged)
            })
        })
        .collect();

    let total = WARMUP as usize + messages;
    let (mut publish_ns, elapsed) = match publisher {
        Publisher::Thread => {
            let mut publish_ns = Vec::with_capacity(total);
            let start = Instant::now();
            for i in 0..total {
                let due = start + period * i as u32;
                loop {
                    let now = Instant::now();
                    if now >= due {
                        break;
                    }
                    let left = due - now;
                    if left > Duration::from_micros(150) {
                        std::thread::sleep(left - Duration::from_micros(100));
                    } else {
                        std::hint::spin_loop();
                    }
                }
                let m = nth_move(i);
                let t = Instant::now();
                let r = bus.publish(m);
                publish_ns.push(t.elapsed().as_nanos() as u64);
                assert_eq!(r.delivered, subscribers);
            }
            (publish_ns, start.elapsed())
        }
        Publisher::Task => {
            let bus = bus.clone();
            rt.block_on(async move {
                tokio::spawn(async move {
                    let mut publish_ns = Vec::with_capacity(total);
                    let start = tokio::time::Instant::now();
                    for i in 0..total {
                        tokio::time::sleep_until(start + period * i as u32).await;
                        let m = nth_move(i);
                        let t = Instant::now();
                        let r = bus.publish(m);
                        publish_ns.push(t.elapsed().as_nanos() as u64);
                        assert_eq!(r.delivered, subscribers);
                    }
                    (publish_ns, start.elapsed())
                })
                .await
                .expect("publisher task")
            })
        }
    };
    bus.close();
    let mut all = Vec::with_capacity(subscribers * messages);
    let mut lagged = 0;
    rt.block_on(async {
        for t in tasks {
            let (lat, l) = t.await.expect("subscriber task");
            all.extend(lat);
            lagged += l;
        }
    });
    all.sort_unstable();
    publish_ns.sort_unstable();
    let us = |ns: u64| ns as f64 / 1000.0;
    let who = match publisher {
        Publisher::Thread => "a publisher thread outside the runtime",
        Publisher::Task => "a publisher task on the same runtime",
    };
    println!(
        "| {who}, one every {} µs | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {} / {} | {} | {:.0} µs | {:.0} µs | {:.0}/s |",
        period.as_micros(),
        us(percentile(&all, 50.0)),
        us(percentile(&all, 99.0)),
        us(percentile(&all, 99.9)),
        us(all.last().copied().unwrap_or(0)),
        all.len(),
        subscribers * messages,
        lagged,
        us(percentile(&publish_ns, 50.0)),
        us(publish_ns.last().copied().unwrap_or(0)),
        total as f64 / elapsed.as_secs_f64()
    );
}

fn main() {
    println!("## Message bus (`cargo bench -p agents-core --bench bus`)\n");
    let bus = Bus::new(256);
    let mut subs = memory(&bus);
    publish_cost(&bus, &mut subs);
    drop(subs);
    assert_eq!(bus.subscriber_count(), 0);
    let (subscribers, messages) = (1_000, 2_000);
    println!(
        "### Delivery latency: {subscribers} subscriber tasks (tokio multi-thread, 2 workers), {messages} broadcast `AgentMoved` (+200 warm-up, not counted)\n"
    );
    println!(
        "| publisher | p50 | p99 | p99.9 | max | deliveries / expected | lagged | publish call p50 | publish call max | publish rate |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    latency(
        subscribers,
        messages,
        Duration::from_micros(500),
        Publisher::Thread,
    );
    latency(
        subscribers,
        messages,
        Duration::from_millis(1),
        Publisher::Task,
    );
    println!(
        "\n(latency = `Instant::now() - envelope.published_at` in each subscriber, over all deliveries; machine load: {})",
        std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|_| "unknown".into())
    );
}
