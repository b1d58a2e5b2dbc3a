//! Devices, streams, device tensors and partitions.
//!
//! A [`DeviceTensor`] owns (or, from [`DeviceTensor::from_raw`], borrows) device memory and
//! describes a strided view of it. [`DeviceTensor::partition`] consumes the tensor into a
//! [`Partition`], the only thing a kernel's `&mut Tensor` output takes, as cutile-rs's host
//! API does; [`Partition::unpartition`] gives it back. Inputs are shared as
//! `Arc<DeviceTensor>` (read-only, as `&Tensor` in the kernel).
//!
//! Memory is never freed under the GPU: a launch keeps the storage of every tensor it uses
//! alive until its work is known complete, and the host copies (`to_vec`, `copy_from_slice`)
//! run on the legacy stream, which orders after the work of the blocking streams this crate
//! creates. Work on two streams is ordered by the tensors themselves: each storage remembers
//! the stream that last used it, and a launch on another stream waits for that one first.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::driver::{self, CUcontext, CUdeviceptr, CUstream};
use crate::dtype::DType;
use crate::errors::{Error, Result};
use crate::plan::{contiguous_strides, tile_grid, TensorLayout};

/// A host element type with a cuTile dtype (plain old data).
pub trait Element: Copy + Send + Sync + 'static {
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(impl Element for $t { const DTYPE: DType = DType::$d; })*
    };
}
element!(
    i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32,
    u64 => U64, f32 => F32, f64 => F64, half::f16 => F16, half::bf16 => BF16,
);

fn bytes_of<T: Element>(values: &[T]) -> &[u8] {
    // SAFETY: every Element is plain old data without padding.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr() as *const u8, std::mem::size_of_val(values))
    }
}

/// One GPU: its primary context, compute capability and a few pooled streams.
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

struct DeviceInner {
    ordinal: i32,
    ctx: usize,
    sm: String,
    pool: OnceLock<Vec<Stream>>,
    turn: AtomicUsize,
}

const POOL_STREAMS: usize = 4;

impl Device {
    /// Device `ordinal`, its primary context made current on this thread.
    pub fn new(ordinal: i32) -> Result<Device> {
        let ctx = driver::primary_context(ordinal)?;
        driver::make_current(ctx)?;
        Ok(Device {
            inner: Arc::new(DeviceInner {
                ordinal,
                ctx: ctx as usize,
                sm: driver::device_sm(ordinal)?,
                pool: OnceLock::new(),
                turn: AtomicUsize::new(0),
            }),
        })
    }

    pub fn ordinal(&self) -> i32 {
        self.inner.ordinal
    }

    /// "sm_90" and the like.
    pub fn sm(&self) -> &str {
        &self.inner.sm
    }

    pub(crate) fn ctx(&self) -> CUcontext {
        self.inner.ctx as CUcontext
    }

    /// Make this device's context current on the calling thread.
    pub fn bind(&self) -> Result<()> {
        driver::make_current(self.ctx())
    }

    /// A new blocking stream (ordered after the legacy default stream).
    pub fn stream(&self) -> Result<Stream> {
        self.bind()?;
        Ok(Stream::wrap(
            self.clone(),
            driver::create_stream(true)?,
            true,
        ))
    }

    /// The legacy default stream.
    pub fn default_stream(&self) -> Stream {
        Stream::wrap(self.clone(), std::ptr::null_mut(), false)
    }

    /// The next of a few pooled streams (what `.await` on an op uses).
    pub fn pooled_stream(&self) -> Result<&Stream> {
        if self.inner.pool.get().is_none() {
            let streams = (0..POOL_STREAMS)
                .map(|_| self.stream())
                .collect::<Result<Vec<_>>>()?;
            let _ = self.inner.pool.set(streams);
        }
        let pool = self.inner.pool.get().expect("set above");
        let turn = self.inner.turn.fetch_add(1, Ordering::Relaxed) % pool.len();
        Ok(&pool[turn])
    }
}

/// A CUDA stream, and the storages of the eager launches it may still be running.
pub struct Stream {
    device: Device,
    raw: usize,
    owned: bool,
    /// The storages eager launches used, and the length at which to ask whether the stream
    /// is idle (then they are released): one query per few thousand launches.
    in_flight: Mutex<(Vec<Arc<Storage>>, usize)>,
}

const KEEP_BEFORE_TIDY: usize = 4096;

impl Stream {
    /// A stream that does not order after the legacy stream (graph capture uses one).
    pub(crate) fn non_blocking(device: &Device) -> Result<Stream> {
        device.bind()?;
        Ok(Stream::wrap(
            device.clone(),
            driver::create_stream(false)?,
            true,
        ))
    }

    fn wrap(device: Device, raw: CUstream, owned: bool) -> Stream {
        Stream {
            device,
            raw: raw as usize,
            owned,
            in_flight: Mutex::new((Vec::new(), KEEP_BEFORE_TIDY)),
        }
    }

    /// A stream another library made.
    ///
    /// # Safety
    /// `raw` is a live stream of `device`'s context that outlives this value, and a blocking
    /// stream (else host copies are not ordered after its work).
    pub unsafe fn from_raw(device: &Device, raw: CUstream) -> Stream {
        Stream::wrap(device.clone(), raw, false)
    }

    pub fn raw(&self) -> CUstream {
        self.raw as CUstream
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Wait for all work on the stream; what its eager launches used is released.
    pub fn synchronize(&self) -> Result<()> {
        self.device.bind()?;
        driver::synchronize(self.raw())?;
        let mut kept = self.in_flight.lock().expect("not poisoned");
        kept.0.clear();
        kept.1 = KEEP_BEFORE_TIDY;
        Ok(())
    }

    /// Keep `storages` alive until this stream's work completes.
    pub(crate) fn keep(&self, storages: impl Iterator<Item = Arc<Storage>>) -> Result<()> {
        let mut kept = self.in_flight.lock().expect("not poisoned");
        kept.0.extend(storages);
        if kept.0.len() >= kept.1 {
            if driver::stream_done(self.raw())? {
                kept.0.clear();
                kept.1 = KEEP_BEFORE_TIDY;
            } else {
                kept.1 = kept.0.len() + KEEP_BEFORE_TIDY;
            }
        }
        Ok(())
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let _ = self.device.bind();
        let _ = driver::synchronize(self.raw());
        if self.owned {
            // SAFETY: created by this value; synchronized above.
            let _ = unsafe { driver::destroy_stream(self.raw()) };
        }
    }
}

/// Device memory: owned (freed on drop) or borrowed (the caller's).
pub struct Storage {
    ptr: CUdeviceptr,
    bytes: usize,
    device: Device,
    owned: bool,
    /// The stream that last used it (tagged: `stream | 1`), or 0.
    last_stream: AtomicUsize,
}

impl Storage {
    pub(crate) fn device(&self) -> &Device {
        &self.device
    }

    /// Order work on `stream` after the last work on another stream that used this memory.
    pub(crate) fn enter(&self, stream: CUstream) -> Result<()> {
        let tag = stream as usize | 1;
        let previous = self.last_stream.swap(tag, Ordering::AcqRel);
        if previous != 0 && previous != tag {
            // A stream that is gone was synchronized when it was dropped; a handle reused
            // since names another stream, and waiting for that one costs time, not safety.
            let _ = driver::synchronize((previous & !1) as CUstream);
        }
        Ok(())
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if self.owned {
            let _ = self.device.bind();
            // SAFETY: allocated by this value; every launch that used it kept this storage
            // alive until its work completed, so nothing pending uses it.
            let _ = unsafe { driver::mem_free(self.ptr) };
        }
    }
}

/// A strided view of device memory; see the module docs.
pub struct DeviceTensor {
    storage: Arc<Storage>,
    layout: TensorLayout,
}

impl std::fmt::Debug for DeviceTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceTensor({} {:?} strides {:?} at {:#x})",
            self.layout.dtype, self.layout.shape, self.layout.strides, self.layout.ptr
        )
    }
}

fn check_extents(shape: &[i64]) -> Result<()> {
    if shape.iter().any(|&d| d < 0) {
        return Err(Error::Usage(format!(
            "shape {shape:?} must hold non-negative extents"
        )));
    }
    Ok(())
}

/// The element count of `shape`, an i64 (as the extents and strides that address it are).
fn numel(shape: &[i64]) -> Result<usize> {
    check_extents(shape)?;
    shape
        .iter()
        .try_fold(1i64, |count, &d| count.checked_mul(d))
        .and_then(|count| usize::try_from(count).ok())
        .ok_or_else(|| {
            Error::Usage(format!(
                "shape {shape:?} holds more elements than an i64 counts"
            ))
        })
}

/// Where a view's bytes start and how many there are, inside the 64-bit address space.
fn raw_extent(layout: &TensorLayout) -> Result<(u64, usize)> {
    let inside = |(lo, hi): (i128, i128)| {
        let bytes = usize::try_from(hi - lo).ok().filter(|_| hi <= 1 << 64)?;
        Some((u64::try_from(lo).ok()?, bytes))
    };
    layout.byte_extent().and_then(inside).ok_or_else(|| {
        Error::Usage(format!(
            "shape {:?} with strides {:?} from {:#x} reaches past the 64-bit address space",
            layout.shape, layout.strides, layout.ptr
        ))
    })
}

impl DeviceTensor {
    /// Uninitialized contiguous memory of `shape`.
    pub fn empty(device: &Device, dtype: DType, shape: &[i64]) -> Result<DeviceTensor> {
        let bytes = numel(shape)?.checked_mul(dtype.itemsize()).ok_or_else(|| {
            Error::Usage(format!(
                "a {dtype} tensor of shape {shape:?} has more bytes than a usize counts"
            ))
        })?;
        device.bind()?;
        let ptr = driver::mem_alloc(bytes)?;
        let storage = Arc::new(Storage {
            ptr,
            bytes,
            device: device.clone(),
            owned: true,
            last_stream: AtomicUsize::new(0),
        });
        Ok(DeviceTensor {
            storage,
            layout: TensorLayout::contiguous(ptr, shape, dtype, device.ordinal()),
        })
    }

    /// Zero-filled contiguous memory of `shape`.
    pub fn zeros(device: &Device, dtype: DType, shape: &[i64]) -> Result<DeviceTensor> {
        let tensor = Self::empty(device, dtype, shape)?;
        // SAFETY: the allocation holds `bytes` bytes.
        unsafe { driver::memset_d8(tensor.storage.ptr, 0, tensor.storage.bytes)? };
        Ok(tensor)
    }

    /// A copy of `values` in new device memory of `shape`.
    pub fn from_slice<T: Element>(
        device: &Device,
        values: &[T],
        shape: &[i64],
    ) -> Result<DeviceTensor> {
        if numel(shape)? != values.len() {
            return Err(Error::Usage(format!(
                "{} values do not fill shape {shape:?}",
                values.len()
            )));
        }
        let tensor = Self::empty(device, T::DTYPE, shape)?;
        // SAFETY: the allocation holds exactly these bytes.
        unsafe { driver::memcpy_htod(tensor.storage.ptr, bytes_of(values))? };
        Ok(tensor)
    }

    /// A view of memory this crate does not own (another library's tensor).
    ///
    /// # Safety
    /// `[ptr, ptr + span)` is device memory of `device` that stays valid, and that nothing
    /// else writes while launches use it, for as long as this tensor (and what it is moved
    /// into) lives.
    pub unsafe fn from_raw(
        device: &Device,
        ptr: u64,
        shape: &[i64],
        strides: Option<&[i64]>,
        dtype: DType,
    ) -> Result<DeviceTensor> {
        check_extents(shape)?;
        let mut layout = TensorLayout::contiguous(ptr, shape, dtype, device.ordinal());
        if let Some(strides) = strides {
            if strides.len() != shape.len() {
                return Err(Error::Usage(format!(
                    "shape {shape:?} and strides {strides:?} differ in rank"
                )));
            }
            layout.strides = strides.to_vec();
        }
        let (lo, bytes) = raw_extent(&layout)?;
        Ok(DeviceTensor {
            storage: Arc::new(Storage {
                ptr: lo,
                bytes,
                device: device.clone(),
                owned: false,
                last_stream: AtomicUsize::new(0),
            }),
            layout,
        })
    }

    pub fn layout(&self) -> &TensorLayout {
        &self.layout
    }

    pub fn shape(&self) -> &[i64] {
        &self.layout.shape
    }

    pub fn dtype(&self) -> DType {
        self.layout.dtype
    }

    pub fn device(&self) -> &Device {
        &self.storage.device
    }

    pub(crate) fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }

    /// Share as a kernel input.
    pub fn shared(self) -> Arc<DeviceTensor> {
        Arc::new(self)
    }

    /// Move into a partition of `tile` tiles (a kernel output).
    pub fn partition(self, tile: &[i64]) -> Result<Partition> {
        if tile.len() != self.layout.ndim() {
            return Err(Error::Usage(format!(
                "tile shape {tile:?} has rank {}, the tensor has rank {}",
                tile.len(),
                self.layout.ndim()
            )));
        }
        if tile.iter().any(|&t| t <= 0) {
            return Err(Error::Usage(format!(
                "tile shape {tile:?} must be positive"
            )));
        }
        Ok(Partition {
            tensor: self,
            tile: tile.to_vec(),
        })
    }

    /// The same memory with its axes in the order `axes` (a transpose; nothing moves).
    pub fn permute(mut self, axes: &[usize]) -> Result<DeviceTensor> {
        let mut sorted = axes.to_vec();
        sorted.sort_unstable();
        if sorted != (0..self.layout.ndim()).collect::<Vec<_>>() {
            return Err(Error::Usage(format!(
                "{axes:?} is not a permutation of {} axes",
                self.layout.ndim()
            )));
        }
        let (shape, strides) = (self.layout.shape.clone(), self.layout.strides.clone());
        self.layout.shape = axes.iter().map(|&a| shape[a]).collect();
        self.layout.strides = axes.iter().map(|&a| strides[a]).collect();
        Ok(self)
    }

    /// A contiguous tensor viewed with another shape of the same element count.
    pub fn reshape(mut self, shape: &[i64]) -> Result<DeviceTensor> {
        let contiguous = self.layout.strides == contiguous_strides(&self.layout.shape);
        if Some(numel(shape)? as i128) != self.layout.numel() || !contiguous {
            return Err(Error::Usage(format!(
                "cannot view {:?} (strides {:?}) as {shape:?}",
                self.layout.shape, self.layout.strides
            )));
        }
        self.layout.shape = shape.to_vec();
        self.layout.strides = contiguous_strides(shape);
        Ok(self)
    }

    /// Copy to the host (any strides), after the work that writes it.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        read_layout(&self.storage, &self.layout)
    }

    /// Overwrite this contiguous tensor with `values` (after the work that uses it).
    pub fn copy_from_slice<T: Element>(&mut self, values: &[T]) -> Result<()> {
        if T::DTYPE != self.layout.dtype || Some(values.len() as i128) != self.layout.numel() {
            return Err(Error::Usage(format!(
                "{} {} values for a {} tensor of shape {:?}",
                values.len(),
                T::DTYPE,
                self.layout.dtype,
                self.layout.shape
            )));
        }
        if self.layout.strides != contiguous_strides(&self.layout.shape) {
            return Err(Error::Usage(
                "copy_from_slice needs a contiguous tensor".into(),
            ));
        }
        self.storage.device.bind()?;
        // SAFETY: the view's bytes lie inside the storage.
        unsafe { driver::memcpy_htod(self.layout.ptr, bytes_of(values)) }
    }
}

fn read_layout<T: Element>(storage: &Storage, layout: &TensorLayout) -> Result<Vec<T>> {
    if T::DTYPE != layout.dtype {
        return Err(Error::Usage(format!(
            "reading a {} tensor as {}",
            layout.dtype,
            T::DTYPE
        )));
    }
    let count = layout
        .numel()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            Error::Usage(format!(
                "shape {:?} holds more elements than a usize counts",
                layout.shape
            ))
        })?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let (lo, bytes) = raw_extent(layout)?;
    let size = layout.dtype.itemsize();
    let mut raw = vec![0u8; bytes];
    storage.device.bind()?;
    // SAFETY: the byte extent lies inside the storage.
    unsafe { driver::memcpy_dtoh(&mut raw, lo)? };
    let mut out: Vec<T> = Vec::with_capacity(count);
    let base = (layout.ptr - lo) as usize;
    let mut index = vec![0i64; layout.ndim()];
    for _ in 0..count {
        let offset: i64 = index.iter().zip(&layout.strides).map(|(i, s)| i * s).sum();
        let at = (base as i64 + offset * size as i64) as usize;
        let mut value = [0u8; 16];
        value[..size].copy_from_slice(&raw[at..at + size]);
        // SAFETY: `size` bytes of a T, read unaligned.
        out.push(unsafe { std::ptr::read_unaligned(value.as_ptr() as *const T) });
        for axis in (0..index.len()).rev() {
            index[axis] += 1;
            if index[axis] < layout.shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    Ok(out)
}

/// A tensor moved in as a kernel output, split into tiles of `tile` elements.
#[derive(Debug)]
pub struct Partition {
    tensor: DeviceTensor,
    tile: Vec<i64>,
}

impl Partition {
    pub fn tile(&self) -> &[i64] {
        &self.tile
    }

    pub fn layout(&self) -> &TensorLayout {
        &self.tensor.layout
    }

    pub(crate) fn tensor(&self) -> &DeviceTensor {
        &self.tensor
    }

    /// Tiles per axis: ceil(extent / tile).
    pub fn grid(&self) -> Vec<i64> {
        tile_grid(&self.tensor.layout.shape, &self.tile).expect("a partition's tiles are positive")
    }

    /// The tile count; None past i64.
    pub fn num_tiles(&self) -> Option<i64> {
        self.grid()
            .iter()
            .try_fold(1i64, |count, &g| count.checked_mul(g))
    }

    /// Give the tensor back.
    pub fn unpartition(self) -> DeviceTensor {
        self.tensor
    }

    /// Copy the partitioned tensor to the host without unpartitioning it.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.tensor.to_vec()
    }

    /// Move into a mapped partition for a persistent kernel's `MappedPartitionMut` output:
    /// `num_tile_blocks` blocks walk the tiles in the grouped order `map` (the kernel's MAP).
    pub fn map(self, map: &[i64], num_tile_blocks: i64) -> Result<MappedPartition> {
        // a group size per axis, or 0 for an OWNED axis (walked by the kernel itself)
        if map.len() != self.tile.len() || map.iter().any(|&g| g < 0) || map.iter().all(|&g| g == 0)
        {
            return Err(Error::Usage(format!(
                "map shape {map:?} must hold {} group sizes or 0 (an OWNED axis), with at \
                 least one group",
                self.tile.len()
            )));
        }
        if num_tile_blocks < 1 {
            return Err(Error::Usage(format!(
                "num_tile_blocks must be positive, got {num_tile_blocks}"
            )));
        }
        Ok(MappedPartition {
            partition: self,
            map: map.to_vec(),
            num_tile_blocks,
        })
    }
}

/// A partition moved in for a persistent kernel's `MappedPartitionMut` output.
#[derive(Debug)]
pub struct MappedPartition {
    partition: Partition,
    map: Vec<i64>,
    num_tile_blocks: i64,
}

impl MappedPartition {
    pub fn map_shape(&self) -> &[i64] {
        &self.map
    }

    pub fn num_tile_blocks(&self) -> i64 {
        self.num_tile_blocks
    }

    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    pub fn unmap(self) -> Partition {
        self.partition
    }

    pub fn unpartition(self) -> DeviceTensor {
        self.partition.unpartition()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_counts_past_i64_are_refused_not_wrapped() {
        // 2^64 + 4 elements: the i64 product once wrapped to 4, a 16-byte allocation for a
        // layout of 2^62 rows
        assert!(matches!(numel(&[(1 << 62) + 1, 4]), Err(Error::Usage(_))));
        assert!(matches!(numel(&[1 << 62, 2]), Err(Error::Usage(_))));
        assert!(matches!(numel(&[-1, 4]), Err(Error::Usage(_))));
        assert_eq!(numel(&[1 << 31, 1 << 31]).unwrap(), 1 << 62);
        assert_eq!(numel(&[0, i64::MAX, i64::MAX]).unwrap(), 0);
        assert_eq!(numel(&[]).unwrap(), 1);
    }

    #[test]
    fn a_view_lies_inside_the_address_space() {
        let view = |ptr: u64, shape: &[i64], strides: &[i64]| TensorLayout {
            strides: strides.to_vec(),
            ..TensorLayout::contiguous(ptr, shape, DType::F32, 0)
        };
        assert_eq!(
            raw_extent(&view(0x1000, &[4, 2], &[2, 1])).unwrap(),
            (0x1000, 32)
        );
        assert_eq!(raw_extent(&view(0x10, &[2], &[-1])).unwrap(), (0xC, 8));
        for past in [
            view(0x10, &[8], &[-1]),
            view(u64::MAX - 3, &[2], &[1]),
            view(0x1000, &[i64::MAX], &[i64::MAX]),
        ] {
            assert!(
                matches!(raw_extent(&past), Err(Error::Usage(_))),
                "{past:?}"
            );
        }
    }
}
