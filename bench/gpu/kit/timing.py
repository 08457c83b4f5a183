"""What the GPU kit's PyTorch scripts time with (as fp8-hopper-gemm does):
the median of per-launch CUDA events after warm-up."""
import statistics


def median_ms(torch, fn, iterations, warmups=3):
    """Milliseconds of fn(i), the median of `iterations` calls each between
    two events, after `warmups` untimed calls (i counts all calls)."""
    for i in range(warmups):
        fn(i)
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(iterations + 1)]
    for i in range(iterations):
        marks[i].record()
        fn(warmups + i)
    marks[-1].record()
    torch.cuda.synchronize()
    return statistics.median(marks[i].elapsed_time(marks[i + 1])
                             for i in range(iterations))
