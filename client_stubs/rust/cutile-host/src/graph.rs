//! CUDA graphs: capture a [`DeviceOp`] (one launch or a chain) once, replay it many times.
//!
//! ```ignore
//! let mut graph = Graph::capture(&device, k1.op(args1).then_with(move |out| Ok(k2.op(...))))?;
//! graph.replay(&stream)?.sync()?;       // or .await
//! let z = graph.args().0[0] ...;         // read between replays (host copies wait for them)
//! let args = graph.into_args()?;         // destroy the graph, take the arguments back
//! ```
//!
//! Capture runs every launch's checks and records the launches on a private non-blocking
//! stream (relaxed capture mode), then instantiates the graph. The graph owns the arguments
//! of its launches (so nothing frees or moves what it writes) until [`Graph::into_args`];
//! a replay borrows the graph mutably until it completes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::driver::{self, CUgraphExec};
use crate::errors::Result;
use crate::launch::{Args, DeviceOp};
use crate::tensor::{Device, Storage, Stream};

/// An instantiated CUDA graph of captured launches.
pub struct Graph {
    device: Device,
    graph: usize,
    exec: usize,
    capture: Stream,
    args: Args,
    _keep: Vec<Arc<Storage>>,
    last_stream: Option<usize>,
}

impl Graph {
    /// Check and capture every launch of `op` (nothing runs on the GPU yet).
    pub fn capture(device: &Device, op: DeviceOp) -> Result<Graph> {
        device.bind()?;
        op.preload(device)?;
        let capture = Stream::non_blocking(device)?;
        driver::begin_capture(capture.raw())?;
        let issued = op.issue(&capture);
        let graph = driver::end_capture(capture.raw());
        let (args, keep) = match issued {
            Ok(issued) => issued,
            Err(e) => {
                if let Ok(graph) = graph {
                    // SAFETY: never instantiated.
                    let _ = unsafe { driver::destroy_graph(graph, std::ptr::null_mut()) };
                }
                return Err(e);
            }
        };
        let graph = graph?;
        let exec = match driver::instantiate_graph(graph) {
            Ok(exec) => exec,
            Err(e) => {
                // SAFETY: never instantiated.
                let _ = unsafe { driver::destroy_graph(graph, std::ptr::null_mut()) };
                return Err(e);
            }
        };
        Ok(Graph {
            device: device.clone(),
            graph: graph as usize,
            exec: exec as usize,
            capture,
            args,
            _keep: keep,
            last_stream: None,
        })
    }

    /// Launch the whole graph on `stream`; the replay completes with `.sync()` or `.await`.
    pub fn replay<'a>(&'a mut self, stream: &'a Stream) -> Result<Replay<'a>> {
        self.device.bind()?;
        if let Some(previous) = self.last_stream.filter(|&s| s != stream.raw() as usize) {
            driver::synchronize(previous as driver::CUstream)?; // replays never overlap
        }
        driver::launch_graph(self.exec as CUgraphExec, stream.raw())?;
        self.last_stream = Some(stream.raw() as usize);
        Ok(Replay {
            graph: self,
            stream,
        })
    }

    /// The captured arguments (read outputs between replays: host copies wait for them).
    pub fn args(&self) -> &Args {
        &self.args
    }

    /// Wait for the last replay, destroy the graph, hand the arguments back.
    pub fn into_args(mut self) -> Result<Args> {
        self.release()?;
        Ok(std::mem::take(&mut self.args))
    }

    fn release(&mut self) -> Result<()> {
        if self.exec == 0 {
            return Ok(());
        }
        self.device.bind()?;
        if let Some(stream) = self.last_stream.take() {
            driver::synchronize(stream as driver::CUstream)?;
        }
        let (graph, exec) = (self.graph, self.exec);
        self.graph = 0;
        self.exec = 0;
        // SAFETY: created by capture; the last replay finished.
        unsafe { driver::destroy_graph(graph as _, exec as _) }?;
        let _ = &self.capture;
        Ok(())
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

/// A replay in flight; the graph stays borrowed until it completes.
pub struct Replay<'a> {
    graph: &'a mut Graph,
    stream: &'a Stream,
}

impl Replay<'_> {
    pub fn sync(self) -> Result<()> {
        self.graph.device.bind()?;
        driver::synchronize(self.stream.raw())
    }
}

impl<'a> std::future::IntoFuture for Replay<'a> {
    type Output = Result<()>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        let marker = DeviceOp::marker();
        let stream = self.stream;
        Box::pin(async move {
            marker.start(stream)?.await?;
            Ok(())
        })
    }
}
