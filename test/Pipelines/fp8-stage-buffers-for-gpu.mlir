// RUN: fp8-opt %s -split-input-file --fp8-stage-buffers-for-gpu | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-stage-buffers-for-gpu \
// RUN:   | mlir-opt -split-input-file --convert-scf-to-cf --finalize-memref-to-llvm="use-generic-functions" \
// RUN:   --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | FileCheck %s --check-prefix=LLVM

memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// The constant table, read by the kernel, lives in managed memory for the
// program's lifetime: a pointer global, null at load, holds its copy; the
// runtime library's allocation and free functions (as
// finalize-memref-to-llvm declares them) make and free it; a global
// destructor frees it.
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
// CHECK: llvm.mlir.global external @__fp8_device_table() {{.*}}: !llvm.ptr {
// CHECK-NEXT: %[[Z:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: llvm.return %[[Z]]
// CHECK: llvm.func internal @__fp8_release_device_state() {
// CHECK: %[[NULL:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[S:.+]] = llvm.mlir.addressof @__fp8_device_table
// CHECK-NEXT: %[[P:.+]] = llvm.load %[[S]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call @_mlir_memref_to_llvm_free(%[[P]])
// CHECK-NEXT: llvm.store %[[NULL]], %[[S]]
// CHECK: llvm.mlir.global_dtors dtors = [@__fp8_release_device_state]
//
// At the entry, the copy: made (16 bytes: 4 x f32) and filled from the
// global when the slot is null, then viewed as memref<4xf32> (offset 0,
// size 4, stride 1).
// CHECK-LABEL: func.func @kernel_args
// CHECK-SAME: (%[[IN:.+]]: memref<?xf32>, %[[OUT:.+]]: memref<4xf32>, %[[HOST:.+]]: memref<4xf32>, %[[BOTH:.+]]: memref<4xf32>)
// CHECK: %[[SLOT:.+]] = llvm.mlir.addressof @__fp8_device_table
// CHECK-NEXT: %[[CUR:.+]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[ZERO:.+]] = llvm.mlir.zero
// CHECK-NEXT: %[[FRESH:.+]] = llvm.icmp "eq" %[[CUR]], %[[ZERO]]
// CHECK-NEXT: %[[PTR:.+]] = scf.if %[[FRESH]] -> (!llvm.ptr) {
// CHECK-NEXT: %[[BYTES:.+]] = llvm.mlir.constant(16 : i64)
// CHECK-NEXT: %[[NEW:.+]] = llvm.call @_mlir_memref_to_llvm_alloc(%[[BYTES]])
// CHECK-NEXT: llvm.store %[[NEW]], %[[SLOT]]
// CHECK-NEXT: scf.yield %[[NEW]]
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[CUR]]
// CHECK: llvm.insertvalue %[[PTR]], %{{.+}}[0]
// CHECK-NEXT: llvm.insertvalue %[[PTR]], %{{.+}}[1]
// CHECK-NEXT: llvm.mlir.constant(0 : index)
// CHECK-NEXT: llvm.insertvalue %{{.+}}[2]
// CHECK-NEXT: llvm.mlir.constant(4 : index)
// CHECK-NEXT: llvm.insertvalue %{{.+}}[3, 0]
// CHECK-NEXT: llvm.mlir.constant(1 : index)
// CHECK-NEXT: llvm.insertvalue %{{.+}}[4, 0]
// CHECK-NEXT: %[[TABLEC:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<4xf32>
// CHECK-NEXT: scf.if %[[FRESH]] {
// CHECK-NEXT: %[[TABLE:.+]] = memref.get_global @table
// CHECK-NEXT: memref.copy %[[TABLE]], %[[TABLEC]] :
//
// Every argument is asked about at the entry (fp8GpuMemoryKind: 0 host,
// 1 managed, 2 device), those kernels use first, and used where it is
// when everything that uses it can address it there, else it gets a
// managed copy used by everything after. %in is only read by the kernel and %out only written by it
// (through a view): used in place unless host memory, which is copied on
// the host. %host is only read on the host: used in place unless device
// memory, which the driver copies (gpu.memcpy; the host cannot read it).
// %both is read on the host and by the kernel: used in place only when
// managed; a copy of device memory is the driver's, of host memory the
// host's. Then %out and %both are copied back (the function is not marked
// read-only), each by whoever copied it in, and the copies are freed at
// the return. The table's copy is neither copied back nor freed.
// CHECK: memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK: %[[INKIND:.+]] = call @fp8GpuMemoryKind(
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[INPLACE:.+]] = arith.cmpi ne, %[[INKIND]], %[[C0]]
// CHECK-NEXT: %[[INB:.+]] = scf.if %[[INPLACE]] -> (memref<?xf32>) {
// CHECK-NEXT: scf.yield %[[IN]]
// CHECK-NEXT: } else {
// CHECK: %[[INC:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK-NEXT: memref.copy %[[IN]], %[[INC]] :
// CHECK-NEXT: scf.yield %[[INC]]
// CHECK: %[[INCOPIED:.+]] = arith.xori %[[INPLACE]], %{{.+}} : i1
// CHECK: memref.extract_aligned_pointer_as_index %[[BOTH]]
// CHECK: %[[BOTHKIND:.+]] = call @fp8GpuMemoryKind(
// CHECK-NEXT: %[[C1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[BOTHPLACE:.+]] = arith.cmpi eq, %[[BOTHKIND]], %[[C1]]
// CHECK-NEXT: %[[C2B:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[BOTHDEV:.+]] = arith.cmpi eq, %[[BOTHKIND]], %[[C2B]]
// CHECK-NEXT: %[[BOTHB:.+]] = scf.if %[[BOTHPLACE]] -> (memref<4xf32>) {
// CHECK-NEXT: scf.yield %[[BOTH]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[BOTHC:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: scf.if %[[BOTHDEV]] {
// CHECK-NEXT: %[[T2:.+]] = gpu.wait async
// CHECK-NEXT: %[[T3:.+]] = gpu.memcpy async [%[[T2]]] %[[BOTHC]], %[[BOTH]]
// CHECK-NEXT: gpu.wait [%[[T3]]]
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.copy %[[BOTH]], %[[BOTHC]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[BOTHC]]
// CHECK: %[[BOTHCOPIED:.+]] = arith.xori %[[BOTHPLACE]], %{{.+}} : i1
// CHECK: memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[OUTKIND:.+]] = call @fp8GpuMemoryKind(
// CHECK: %[[OUTPLACE:.+]] = arith.cmpi ne, %[[OUTKIND]]
// CHECK-NEXT: %[[OUTB:.+]] = scf.if %[[OUTPLACE]] -> (memref<4xf32>) {
// CHECK-NEXT: scf.yield %[[OUT]]
// CHECK: memref.copy %[[OUT]], %{{.+}} :
// CHECK: %[[OUTCOPIED:.+]] = arith.xori %[[OUTPLACE]], %{{.+}} : i1
// CHECK: memref.extract_aligned_pointer_as_index %[[HOST]]
// CHECK: %[[HOSTKIND:.+]] = call @fp8GpuMemoryKind(
// CHECK-NEXT: %[[C2:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[HOSTPLACE:.+]] = arith.cmpi ne, %[[HOSTKIND]], %[[C2]]
// CHECK-NEXT: %[[HOSTB:.+]] = scf.if %[[HOSTPLACE]] -> (memref<4xf32>) {
// CHECK-NEXT: scf.yield %[[HOST]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[HOSTC:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[T0:.+]] = gpu.wait async
// CHECK-NEXT: %[[T1:.+]] = gpu.memcpy async [%[[T0]]] %[[HOSTC]], %[[HOST]]
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: scf.yield %[[HOSTC]]
// CHECK: %[[HOSTCOPIED:.+]] = arith.xori %[[HOSTPLACE]], %{{.+}} : i1
// CHECK-NOT: memref.get_global
// CHECK: memref.load %[[HOSTB]]
// CHECK: memref.load %[[BOTHB]]
// CHECK: memref.subview %[[OUTB]]
// CHECK: gpu.launch
// CHECK: memref.load %[[INB]]
// CHECK: memref.load %[[TABLEC]]
// CHECK: memref.load %[[BOTHB]]
// CHECK: gpu.terminator
// CHECK: scf.if %[[INCOPIED]] {
// CHECK-NEXT: memref.dealloc %[[INB]] :
// CHECK: scf.if %[[BOTHCOPIED]] {
// CHECK-NEXT: scf.if %[[BOTHDEV]] {
// CHECK-NEXT: %[[T4:.+]] = gpu.wait async
// CHECK-NEXT: %[[T5:.+]] = gpu.memcpy async [%[[T4]]] %[[BOTH]], %[[BOTHB]]
// CHECK-NEXT: gpu.wait [%[[T5]]]
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.copy %[[BOTHB]], %[[BOTH]]
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[BOTHB]] :
// CHECK: scf.if %[[OUTCOPIED]] {
// CHECK-NEXT: memref.copy %[[OUTB]], %[[OUT]] :
// CHECK-NEXT: memref.dealloc %[[OUTB]] :
// CHECK: scf.if %[[HOSTCOPIED]] {
// CHECK-NEXT: memref.dealloc %[[HOSTB]] :
// CHECK-NOT: %[[TABLEC]]
// CHECK: return
//
// Lowered to the LLVM dialect (without the GPU part): the copy comes from
// the runtime's allocation function, is stored into the slot, and the
// table's bytes are copied into it through a descriptor of that pointer
// (the cast folded away).
// LLVM: llvm.mlir.global external @__fp8_device_table()
// LLVM: llvm.mlir.global_dtors dtors = [@__fp8_release_device_state]
// LLVM-LABEL: llvm.func @kernel_args
// LLVM: %[[NEW:.+]] = llvm.call @_mlir_memref_to_llvm_alloc
// LLVM-NEXT: llvm.store %[[NEW]]
// LLVM: ^bb3(%[[PTR:.+]]: !llvm.ptr):
// LLVM: llvm.insertvalue %[[PTR]], %{{.+}}[1]
// LLVM-NOT: unrealized_conversion_cast
// LLVM: llvm.mlir.addressof @table
// LLVM-NOT: unrealized_conversion_cast
// LLVM: "llvm.intr.memcpy"
func.func @kernel_args(%in: memref<?xf32>, %out: memref<4xf32>, %host: memref<4xf32>, %both: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %table = memref.get_global @table : memref<4xf32>
  %h = memref.load %host[%c0] : memref<4xf32>
  %b = memref.load %both[%c0] : memref<4xf32>
  %view = memref.subview %out[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c2, %sy = %c1, %sz = %c1) {
    %x = memref.load %in[%tx] : memref<?xf32>
    %t = memref.load %table[%tx] : memref<4xf32>
    %s = arith.addf %x, %t : f32
    %y = memref.load %both[%tx] : memref<4xf32>
    %r = arith.addf %s, %y : f32
    memref.store %r, %view[%tx] : memref<2xf32, strided<[1]>>
    gpu.terminator
  }
  memref.store %h, %both[%c0] : memref<4xf32>
  return %b : f32
}

// -----

memref.global "private" @state : memref<f32> = dense<0.0>
memref.global "private" @host_state : memref<f32> = dense<0.0>
memref.global "private" constant @host_table : memref<f32> = dense<2.0>
func.func private @other()

// Marked by fp8-read-only-arguments: the kernel's writes to %x stay in a
// copy, made wherever %x is (no device check). The state global, written
// by the kernel, is the device copy everywhere (the second get_global, in
// a nested region, reads it too): nothing is copied around the call or at
// the return.
// CHECK-LABEL: func.func @update_state
// CHECK-NOT: fp8_read_only_arguments
// CHECK-SAME: (%[[X:.+]]: memref<4xf32>
// CHECK: llvm.mlir.addressof @__fp8_device_state
// CHECK: llvm.mlir.constant(4 : i64)
// CHECK: %[[GC:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<f32>
// CHECK: %[[XC:.+]] = memref.alloc() : memref<4xf32>
// CHECK: gpu.launch
// CHECK: memref.store %{{.+}}, %[[GC]][]
// CHECK-NOT: memref.copy
// CHECK: call @other()
// CHECK-NOT: memref.copy
// CHECK: scf.execute_region
// CHECK: memref.load %[[GC]][]
// CHECK-NOT: memref.copy
// CHECK: return
func.func @update_state(%x: memref<4xf32>) -> f32 attributes {fp8_read_only_arguments} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = memref.get_global @state : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<4xf32>
    memref.store %v, %x[%c0] : memref<4xf32>
    memref.store %v, %s[] : memref<f32>
    gpu.terminator
  }
  call @other() : () -> ()
  %r = scf.execute_region -> f32 {
    %s2 = memref.get_global @state : memref<f32>
    %l = memref.load %s2[] : memref<f32>
    scf.yield %l : f32
  }
  return %r : f32
}

// A function with no kernel (a checkpoint's state accessor) reads and
// writes the state where the kernels do, and so is every mutable global
// (the host code between kernels works on the device's copy); a constant
// that no kernel reads stays where it is.
// CHECK-LABEL: func.func @get_state
// CHECK-DAG: llvm.mlir.addressof @__fp8_device_state
// CHECK-DAG: llvm.mlir.addressof @__fp8_device_host_state
// CHECK-DAG: %[[GC:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<f32>
// CHECK-DAG: %[[T:.+]] = memref.get_global @host_table
// CHECK: memref.load %[[T]][]
// CHECK-NOT: __fp8_device_host_table
func.func @get_state() -> f32 {
  %s = memref.get_global @state : memref<f32>
  %h = memref.get_global @host_state : memref<f32>
  %t = memref.get_global @host_table : memref<f32>
  memref.copy %s, %h : memref<f32> to memref<f32>
  %v = memref.load %t[] : memref<f32>
  return %v : f32
}

// -----

// No kernel: no global gets a device copy. An argument host code reads is
// used where it is unless it is device memory, which the host cannot
// address: the driver copies it to managed memory.
// CHECK-NOT: __fp8_device
// CHECK-LABEL: func.func @host_only
// CHECK-SAME: (%[[IN:.+]]: memref<4xf32>)
// CHECK: %[[KIND:.+]] = call @fp8GpuMemoryKind(
// CHECK-NEXT: %[[C2:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[INPLACE:.+]] = arith.cmpi ne, %[[KIND]], %[[C2]]
// CHECK-NEXT: %[[B:.+]] = scf.if %[[INPLACE]]
// CHECK: gpu.memcpy async [%{{.+}}] %{{.+}}, %[[IN]]
// CHECK-NOT: memref.copy
// CHECK: memref.load %[[B]]
func.func @host_only(%in: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %in[%c0] : memref<4xf32>
  return %x : f32
}

// An argument only the driver copies (a state setter's) and one only
// sized: nothing to stage, whatever memory they are.
// CHECK-LABEL: func.func @driver_only
// CHECK-NOT: fp8GpuMemoryKind
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @driver_only(%in: memref<4xf32>, %shape: memref<?xf32>, %out: memref<4xf32>) -> index {
  %c0 = arith.constant 0 : index
  %t = gpu.wait async
  %c = gpu.memcpy async [%t] %out, %in : memref<4xf32>, memref<4xf32>
  gpu.wait [%c]
  %d = memref.dim %shape, %c0 : memref<?xf32>
  return %d : index
}
