//! A connection's campaign requests, answered one at a time in the order they came, on a task
//! of their own.
//!
//! In order: a `campaign_state` pipelined behind a `campaign_load` sees the campaign loaded,
//! and the replies of a connection's campaign requests come in the order of those requests.
//! On a task of their own: a GM turn waits for a model, and meanwhile the connection's other
//! requests (a `ping`, an `agent_spawn_request`) are read and answered. At most
//! [`MAX_QUEUED_CAMPAIGN_REQUESTS`] wait behind the one running; one more is refused (the
//! caller answers it `rate_limited`). A request that panics is logged, and the ones behind it
//! still run.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::OnceLock;

use futures_util::FutureExt;
use tokio::sync::mpsc;

use crate::limits::MAX_QUEUED_CAMPAIGN_REQUESTS;

/// A queued request: it answers by itself when it is done.
type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The campaign requests of one connection (the task starts with the first of them, and ends
/// once the connection dropped the queue and the last request is answered).
#[derive(Default)]
pub(super) struct CampaignQueue {
    jobs: OnceLock<mpsc::Sender<Job>>,
}

impl CampaignQueue {
    /// Queues `job` behind the connection's earlier campaign requests; `false` when
    /// [`MAX_QUEUED_CAMPAIGN_REQUESTS`] wait already (the job is dropped, not run).
    pub(super) fn push(&self, job: impl Future<Output = ()> + Send + 'static) -> bool {
        let jobs = self.jobs.get_or_init(|| {
            let (tx, mut rx) = mpsc::channel::<Job>(MAX_QUEUED_CAMPAIGN_REQUESTS);
            tokio::spawn(async move {
                while let Some(job) = rx.recv().await {
                    if AssertUnwindSafe(job).catch_unwind().await.is_err() {
                        tracing::error!("a campaign request panicked; the next ones still run");
                    }
                }
            });
            tx
        });
        jobs.try_send(Box::pin(job)).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Jobs run one at a time in the order pushed, even when an earlier one waits longer; a
    /// panicking job does not stop the ones behind it; a full queue refuses.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_jobs_in_order_one_at_a_time() {
        use tokio::sync::oneshot;
        let queue = CampaignQueue::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (started, running) = oneshot::channel::<()>();
        let (release, released) = oneshot::channel::<()>();
        let first = seen.clone();
        assert!(queue.push(async move {
            let _ = started.send(());
            let _ = released.await;
            first.lock().unwrap().push(0);
        }));
        running.await.unwrap();
        // The first job holds the task; the limit's worth wait behind it, one more is refused.
        assert!(queue.push(async { panic!("a bug in a request") }));
        for i in 1..MAX_QUEUED_CAMPAIGN_REQUESTS {
            let seen = seen.clone();
            assert!(
                queue.push(async move { seen.lock().unwrap().push(i) }),
                "{i}"
            );
        }
        assert!(!queue.push(async {}));
        release.send(()).unwrap();
        for _ in 0..1_000 {
            if seen.lock().unwrap().len() == MAX_QUEUED_CAMPAIGN_REQUESTS {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen, (0..MAX_QUEUED_CAMPAIGN_REQUESTS).collect::<Vec<_>>());
        // The queue takes jobs again.
        let (done, finished) = oneshot::channel();
        assert!(queue.push(async move {
            let _ = done.send(());
        }));
        finished.await.unwrap();
    }
}
