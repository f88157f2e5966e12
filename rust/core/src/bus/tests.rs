//! Bus tests: delivery, each filter dimension, broadcasts, lag, unsubscribe, close, concurrency,
//! cancel safety.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::*;
use crate::geometry::Position;

fn spoke(from: &str, to: &[&str], content: &str) -> BusMessage {
    BusMessage::AgentSpoke {
        agent_id: from.into(),
        content: content.into(),
        recipients: to.iter().map(|s| s.to_string()).collect(),
        dialog_type: "chat".into(),
        inbox_id: None,
    }
}

fn moved(agent: &str, x: f64) -> BusMessage {
    BusMessage::AgentMoved {
        agent_id: agent.into(),
        from: Position::new(0.0, 0.0),
        to: Position::new(x, 0.0),
    }
}

fn assigned(to: &str, by: &str, task_id: i64) -> BusMessage {
    BusMessage::TaskAssigned {
        agent_id: to.into(),
        task_id,
        task_name: format!("task {task_id}"),
        assigned_by: by.into(),
    }
}

/// Every queued message (lag reports panic: not expected here).
fn drain(sub: &mut Subscription) -> Vec<Arc<Envelope>> {
    let mut out = Vec::new();
    while let Some(r) = sub.try_recv() {
        match r {
            Received::Message(e) => out.push(e),
            Received::Lagged { missed } => panic!("unexpected lag of {missed}"),
        }
    }
    out
}

fn contents(envs: &[Arc<Envelope>]) -> Vec<String> {
    envs.iter()
        .map(|e| match &e.message {
            BusMessage::AgentSpoke { content, .. } => content.clone(),
            other => other.kind().to_string(),
        })
        .collect()
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

#[test]
fn filter_builders_replace_and_all_is_default() {
    assert_eq!(Filter::all(), Filter::default());
    let f = Filter::all()
        .kinds([MessageKind::AgentMoved])
        .kinds([MessageKind::AgentSpoke, MessageKind::AgentError])
        .senders(["a"])
        .senders(["b", "c"])
        .recipients(["x"])
        .recipients(["y"])
        .with_broadcasts(true);
    assert_eq!(
        f.kinds,
        Some([MessageKind::AgentSpoke, MessageKind::AgentError].into())
    );
    assert_eq!(f.senders, Some(["b".to_string(), "c".to_string()].into()));
    assert_eq!(f.recipients, Some(["y".to_string()].into()));
    assert!(f.include_broadcasts);
    assert!(!f.with_broadcasts(false).include_broadcasts);
}

#[test]
fn filter_matches_each_dimension() {
    let all = Filter::all();
    assert!(all.matches(&spoke("a", &[], "x")));
    assert!(all.matches(&spoke("a", &["b"], "x")));
    assert!(all.matches(&moved("a", 1.0)));

    let kinds = Filter::all().kinds([MessageKind::AgentMoved]);
    assert!(kinds.matches(&moved("a", 1.0)));
    assert!(!kinds.matches(&spoke("a", &[], "x")));
    assert!(!Filter::all().kinds([]).matches(&moved("a", 1.0)));

    let senders = Filter::all().senders(["a"]);
    assert!(senders.matches(&spoke("a", &["z"], "x")));
    assert!(!senders.matches(&spoke("b", &["z"], "x")));
    // TaskAssigned's sender is the assigner.
    assert!(senders.matches(&assigned("z", "a", 1)));
    assert!(!senders.matches(&assigned("a", "z", 1)));

    let to_b = Filter::all().recipients(["b"]);
    assert!(to_b.matches(&spoke("a", &["b"], "x")));
    assert!(to_b.matches(&spoke("a", &["c", "b"], "x")));
    assert!(!to_b.matches(&spoke("a", &["c"], "x")));
    assert!(!to_b.matches(&spoke("a", &[], "x")));
    assert!(
        to_b.clone()
            .with_broadcasts(true)
            .matches(&spoke("a", &[], "x"))
    );
    assert!(!to_b.with_broadcasts(true).matches(&spoke("a", &["c"], "x")));
    // An empty recipient set: only broadcasts, only when accepted.
    assert!(
        !Filter::all()
            .recipients::<&str>([])
            .matches(&moved("a", 1.0))
    );
    assert!(
        Filter::all()
            .recipients::<&str>([])
            .with_broadcasts(true)
            .matches(&moved("a", 1.0))
    );
    // include_broadcasts alone changes nothing.
    assert!(
        Filter::all()
            .with_broadcasts(false)
            .matches(&moved("a", 1.0))
    );

    let combo = Filter::all()
        .kinds([MessageKind::AgentSpoke])
        .senders(["a"])
        .recipients(["b"]);
    assert!(combo.matches(&spoke("a", &["b"], "x")));
    assert!(!combo.matches(&spoke("c", &["b"], "x")));
    assert!(!combo.matches(&spoke("a", &["c"], "x")));
    assert!(!combo.matches(&assigned("b", "a", 1)));
}

#[test]
fn delivers_to_every_matching_subscriber_once() {
    let bus = Bus::new(16);
    let mut a = bus.subscribe(Filter::all());
    let mut b = bus.subscribe(Filter::all());
    let mut only_moves = bus.subscribe(Filter::all().kinds([MessageKind::AgentMoved]));
    assert_eq!(bus.subscriber_count(), 3);
    assert_ne!(a.id(), b.id());

    let r1 = bus.publish(spoke("x", &[], "hello"));
    let r2 = bus.publish(moved("x", 2.0));
    assert_eq!((r1.seq, r1.delivered, r1.dropped), (1, 2, 0));
    assert_eq!((r2.seq, r2.delivered, r2.dropped), (2, 3, 0));

    let got_a = drain(&mut a);
    assert_eq!(got_a.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(got_a[0].message, spoke("x", &[], "hello"));
    assert!(got_a[0].timestamp_ms > 0);
    let got_b = drain(&mut b);
    // One allocation per publish: every subscriber shares the same envelope.
    assert!(Arc::ptr_eq(&got_a[1], &got_b[1]));
    let got_moves = drain(&mut only_moves);
    assert_eq!(got_moves.len(), 1);
    assert_eq!(got_moves[0].seq, 2);

    let stats = bus.stats();
    assert_eq!(stats.published, 2);
    assert_eq!(stats.delivered, 5);
    assert_eq!(stats.dropped, 0);
    assert_eq!(stats.subscribers, 3);
    assert!(!stats.closed);
}

#[test]
fn filtered_subscriptions_get_exactly_their_messages() {
    let bus = Bus::new(64);
    let mut to_b = bus.subscribe(Filter::all().recipients(["b"]));
    let mut to_b_bc = bus.subscribe(Filter::all().recipients(["b"]).with_broadcasts(true));
    let mut from_a = bus.subscribe(Filter::all().senders(["a"]));
    let mut from_a_moves = bus.subscribe(
        Filter::all()
            .senders(["a"])
            .kinds([MessageKind::AgentMoved]),
    );
    let mut spoke_only = bus.subscribe(Filter::all().kinds([MessageKind::AgentSpoke]));
    let mut agent_b = bus.subscribe(agent_filter("b"));
    let mut nothing = bus.subscribe(Filter::all().kinds([]));

    bus.publish(spoke("a", &["b"], "a→b"));
    bus.publish(spoke("c", &["b"], "c→b"));
    bus.publish(spoke("a", &[], "a→all"));
    bus.publish(spoke("a", &["d"], "a→d"));
    bus.publish(moved("a", 1.0));
    bus.publish(moved("c", 1.0));
    bus.publish(assigned("b", "player_0", 7));

    assert_eq!(contents(&drain(&mut to_b)), ["a→b", "c→b", "task_assigned"]);
    assert_eq!(
        contents(&drain(&mut to_b_bc)),
        [
            "a→b",
            "c→b",
            "a→all",
            "agent_moved",
            "agent_moved",
            "task_assigned"
        ]
    );
    assert_eq!(
        contents(&drain(&mut from_a)),
        ["a→b", "a→all", "a→d", "agent_moved"]
    );
    assert_eq!(contents(&drain(&mut from_a_moves)), ["agent_moved"]);
    assert_eq!(
        contents(&drain(&mut spoke_only)),
        ["a→b", "c→b", "a→all", "a→d"]
    );
    // The agent filter: its kinds addressed to it, and broadcasts of its kinds (no moves).
    assert_eq!(
        contents(&drain(&mut agent_b)),
        ["a→b", "c→b", "a→all", "task_assigned"]
    );
    assert!(drain(&mut nothing).is_empty());
}

#[test]
fn multi_recipient_message_is_delivered_once() {
    let bus = Bus::new(16);
    let mut both = bus.subscribe(Filter::all().recipients(["b", "c"]));
    let mut only_c = bus.subscribe(Filter::all().recipients(["c"]));
    let mut all = bus.subscribe(Filter::all());
    let mut from_a = bus.subscribe(Filter::all().senders(["a", "z"]));
    let report = bus.publish(spoke("a", &["b", "c", "b"], "to many"));
    assert_eq!(report.delivered, 4);
    assert_eq!(drain(&mut both).len(), 1);
    assert_eq!(drain(&mut only_c).len(), 1);
    assert_eq!(drain(&mut all).len(), 1);
    assert_eq!(drain(&mut from_a).len(), 1);
}

#[test]
fn lag_keeps_oldest_and_reports_exact_counts() {
    let bus = Bus::new(1024);
    let mut slow = bus.subscribe_with_capacity(Filter::all(), 3);
    let mut fast = bus.subscribe(Filter::all());
    assert_eq!(slow.capacity(), 3);
    for i in 1..=10 {
        let r = bus.publish(spoke("a", &[], &format!("m{i}")));
        assert_eq!(r.delivered, if i <= 3 { 2 } else { 1 });
        assert_eq!(r.dropped, usize::from(i > 3));
    }
    assert_eq!(slow.queued(), 3);
    assert_eq!(slow.missed_total(), 7);
    assert!(matches!(
        slow.try_recv(),
        Some(Received::Lagged { missed: 7 })
    ));
    assert_eq!(contents(&drain(&mut slow)), ["m1", "m2", "m3"]);
    assert!(slow.try_recv().is_none());
    // The other subscriber was not affected.
    assert_eq!(drain(&mut fast).len(), 10);
    assert_eq!(fast.missed_total(), 0);

    // A second overflow reports only what was missed since the last report.
    for i in 11..=15 {
        bus.publish(spoke("a", &[], &format!("m{i}")));
    }
    assert!(matches!(
        slow.try_recv(),
        Some(Received::Lagged { missed: 2 })
    ));
    assert_eq!(contents(&drain(&mut slow)), ["m11", "m12", "m13"]);
    assert_eq!(slow.missed_total(), 9);

    // Overflow by one: the report still precedes the (older) queued messages.
    for i in 16..=19 {
        bus.publish(spoke("a", &[], &format!("m{i}")));
    }
    match slow.try_recv() {
        Some(Received::Lagged { missed: 1 }) => {}
        other => panic!("expected Lagged{{1}}, got {other:?}"),
    }
    assert_eq!(contents(&drain(&mut slow)), ["m16", "m17", "m18"]);
    let stats = bus.stats();
    assert_eq!(stats.dropped, 10);
    assert_eq!(stats.delivered, 19 + 9);
}

#[test]
fn zero_capacity_is_one() {
    let bus = Bus::new(0);
    assert_eq!(bus.default_capacity(), 1);
    let mut sub = bus.subscribe_with_capacity(Filter::all(), 0);
    assert_eq!(sub.capacity(), 1);
    bus.publish(moved("a", 1.0));
    bus.publish(moved("a", 2.0));
    assert!(matches!(
        sub.try_recv(),
        Some(Received::Lagged { missed: 1 })
    ));
    assert!(matches!(sub.try_recv(), Some(Received::Message(e)) if e.seq == 1));
}

#[test]
fn dropping_a_subscription_unsubscribes() {
    let bus = Bus::new(8);
    let subs: Vec<Subscription> = (0..100)
        .map(|i| bus.subscribe(agent_filter(&format!("agent_{i:03}"))))
        .collect();
    let general = bus.subscribe(Filter::all());
    let by_sender = bus.subscribe(Filter::all().senders(["agent_001"]));
    assert_eq!(bus.subscriber_count(), 102);
    assert_eq!(
        bus.publish(spoke("agent_001", &["agent_005"], "x"))
            .delivered,
        3
    );
    assert_eq!(bus.publish(spoke("agent_001", &[], "x")).delivered, 102);

    // Drop every other agent, and the two others.
    let mut kept = Vec::new();
    for (i, s) in subs.into_iter().enumerate() {
        if i % 2 == 0 {
            kept.push(s);
        }
    }
    drop(general);
    drop(by_sender);
    assert_eq!(bus.subscriber_count(), 50);
    assert_eq!(
        bus.publish(spoke("agent_001", &["agent_005"], "x"))
            .delivered,
        0
    );
    assert_eq!(
        bus.publish(spoke("agent_001", &["agent_004"], "x"))
            .delivered,
        1
    );
    assert_eq!(bus.publish(spoke("agent_001", &[], "x")).delivered, 50);
    drop(kept);
    assert_eq!(bus.subscriber_count(), 0);
    assert_eq!(bus.publish(spoke("agent_001", &[], "x")).delivered, 0);
    assert_eq!(bus.stats().subscribers, 0);
}

#[test]
fn close_drains_then_ends() {
    let bus = Bus::new(8);
    let mut sub = bus.subscribe(Filter::all());
    bus.publish(moved("a", 1.0));
    bus.publish(moved("a", 2.0));
    bus.close();
    bus.close(); // idempotent
    assert!(bus.is_closed());
    assert!(sub.is_closed());
    let r = bus.publish(moved("a", 3.0));
    assert_eq!(
        r,
        PublishReport {
            seq: 0,
            delivered: 0,
            dropped: 0
        }
    );
    assert_eq!(drain(&mut sub).len(), 2);
    assert!(sub.try_recv().is_none());

    let mut late = bus.subscribe(Filter::all());
    assert!(late.is_closed());
    assert!(late.try_recv().is_none());
    assert!(bus.stats().closed);
    assert_eq!(bus.stats().published, 2);

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        assert!(sub.recv().await.is_none());
        assert!(late.recv().await.is_none());
    });
}

#[test]
fn dropping_the_last_bus_handle_closes() {
    let bus = Bus::new(8);
    let clone = bus.clone();
    let mut sub = bus.subscribe(Filter::all());
    clone.publish(moved("a", 1.0));
    drop(bus);
    assert!(!sub.is_closed());
    drop(clone);
    assert!(sub.is_closed());
    assert!(matches!(sub.try_recv(), Some(Received::Message(_))));
    assert!(sub.try_recv().is_none());
}

#[tokio::test]
async fn close_wakes_a_waiting_receiver() {
    let bus = Bus::new(8);
    let mut sub = bus.subscribe(Filter::all());
    let waiter = tokio::spawn(async move { sub.recv().await.is_none() });
    tokio::task::yield_now().await;
    bus.close();
    assert!(waiter.await.expect("join"));
}

#[test]
fn concurrent_publishers_keep_per_publisher_order() {
    const PUBLISHERS: usize = 4;
    const EACH: usize = 10_000;
    let bus = Bus::new(8);
    let mut all = bus.subscribe_with_capacity(Filter::all(), PUBLISHERS * EACH);
    let mut from_p1 = bus.subscribe_with_capacity(Filter::all().senders(["p1"]), EACH);
    let mut to_p2 = bus.subscribe_with_capacity(agent_filter("p2"), PUBLISHERS * EACH);
    let churn_bus = bus.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let churn_stop = Arc::clone(&stop);
    // Subscriptions come and go meanwhile.
    let churn = std::thread::spawn(move || {
        let mut n = 0u64;
        while !churn_stop.load(Ordering::Relaxed) {
            let s = churn_bus.subscribe_with_capacity(agent_filter(&format!("c{}", n % 7)), 2);
            drop(s);
            n += 1;
        }
        n
    });
    let threads: Vec<_> = (0..PUBLISHERS)
        .map(|p| {
            let bus = bus.clone();
            std::thread::spawn(move || {
                let me = format!("p{p}");
                let next = format!("p{}", (p + 1) % PUBLISHERS);
                for i in 0..EACH {
                    let r = bus.publish(spoke(&me, &[&next], &i.to_string()));
                    assert!(r.seq > 0);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("publisher");
    }
    stop.store(true, Ordering::Relaxed);
    churn.join().expect("churn");

    let envs = drain(&mut all);
    assert_eq!(envs.len(), PUBLISHERS * EACH);
    let mut next = [0usize; PUBLISHERS];
    let mut seqs: Vec<u64> = Vec::with_capacity(envs.len());
    for e in &envs {
        let BusMessage::AgentSpoke {
            agent_id, content, ..
        } = &e.message
        else {
            panic!("unexpected {:?}", e.message)
        };
        let p: usize = agent_id[1..].parse().expect("publisher index");
        assert_eq!(content.parse::<usize>().expect("counter"), next[p]);
        next[p] += 1;
        seqs.push(e.seq);
    }
    assert_eq!(next, [EACH; PUBLISHERS]);
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=(PUBLISHERS * EACH) as u64).collect::<Vec<_>>());
    let p1: Vec<String> = contents(&drain(&mut from_p1));
    assert_eq!(p1, (0..EACH).map(|i| i.to_string()).collect::<Vec<_>>());
    // p1 addresses p2.
    assert_eq!(contents(&drain(&mut to_p2)), p1);
    assert_eq!(bus.subscriber_count(), 3);
}

#[test]
fn try_recv_from_a_thread_without_runtime() {
    let bus = Bus::new(4096);
    let mut sub = bus.subscribe(Filter::all().kinds([MessageKind::AgentMoved]));
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        while got.len() < 1000 {
            match sub.try_recv() {
                Some(Received::Message(e)) => got.push(e.seq),
                Some(Received::Lagged { missed }) => panic!("lagged {missed}"),
                None => std::thread::yield_now(),
            }
        }
        got
    });
    for i in 0..1000 {
        bus.publish(moved("a", f64::from(i)));
    }
    assert_eq!(
        reader.join().expect("reader"),
        (1..=1000).collect::<Vec<u64>>()
    );
}

#[test]
fn a_cancelled_recv_loses_nothing() {
    let bus = Bus::new(8);
    let mut sub = bus.subscribe(Filter::all());
    let mut cx = Context::from_waker(Waker::noop());
    {
        let fut = pin!(sub.recv());
        assert!(fut.poll(&mut cx).is_pending());
    } // cancelled while registered
    bus.publish(moved("a", 1.0));
    {
        let mut fut = pin!(sub.recv());
        match fut.as_mut().poll(&mut cx) {
            Poll::Ready(Some(Received::Message(e))) => assert_eq!(e.seq, 1),
            other => panic!("expected the message, got {other:?}"),
        }
    }
    assert!(sub.try_recv().is_none());
}

#[tokio::test(start_paused = true)]
async fn recv_in_select_is_cancel_safe() {
    const N: usize = 200;
    let bus = Bus::new(4);
    let mut sub = bus.subscribe(agent_filter("b"));
    let publisher = {
        let bus = bus.clone();
        tokio::spawn(async move {
            for i in 0..N {
                bus.publish(spoke("a", &["b"], &i.to_string()));
                // Alternate bursts and pauses so that the timer branch wins sometimes.
                if i % 3 == 0 {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                } else {
                    tokio::task::yield_now().await;
                }
            }
        })
    };
    let mut got = Vec::new();
    let mut timeouts = 0;
    while got.len() < N {
        tokio::select! {
            r = sub.recv() => match r {
                Some(Received::Message(e)) => got.push(contents(&[e]).remove(0)),
                Some(Received::Lagged { missed }) => panic!("lagged {missed}"),
                None => panic!("closed"),
            },
            _ = tokio::time::sleep(Duration::from_millis(2)) => timeouts += 1,
        }
    }
    publisher.await.expect("publisher");
    assert!(timeouts > 0, "the timer branch never won");
    assert_eq!(got, (0..N).map(|i| i.to_string()).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_receive_from_another_thread() {
    let bus = Bus::new(1024);
    let handles: Vec<_> = (0..50)
        .map(|_| {
            let mut sub = bus.subscribe(Filter::all());
            tokio::spawn(async move {
                let mut n = 0u64;
                while let Some(r) = sub.recv().await {
                    match r {
                        Received::Message(e) => {
                            n += 1;
                            assert_eq!(e.seq, n);
                        }
                        Received::Lagged { missed } => panic!("lagged {missed}"),
                    }
                }
                n
            })
        })
        .collect();
    let publisher = {
        let bus = bus.clone();
        std::thread::spawn(move || {
            for i in 0..500 {
                bus.publish(moved("a", f64::from(i)));
            }
            bus.close();
        })
    };
    publisher.join().expect("publisher");
    for h in handles {
        assert_eq!(h.await.expect("task"), 500);
    }
}
