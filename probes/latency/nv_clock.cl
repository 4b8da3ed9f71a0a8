// The cycle counter of NVIDIA's OpenCL, shared by every program that times its own loop (the
// latency chase, the memory chase). Prepended to a program's source; built with
// -DGD_NV_CLOCK=1 on NVIDIA's platform only, whose compiler takes inline PTX. The PTX serves
// the measurement (%clock64 cycles, %globaltimer ns); the loads measured stay OpenCL C.
// Elsewhere both read 0, and the host times the kernel by its events instead.
#if defined(GD_NV_CLOCK) && GD_NV_CLOCK
#define GD_CLOCK64(v) __asm__ volatile("mov.u64 %0, %%clock64;" : "=l"(v)::"memory")
#define GD_GLOBALTIMER(v) __asm__ volatile("mov.u64 %0, %%globaltimer;" : "=l"(v)::"memory")
#else
#define GD_CLOCK64(v) ((v) = 0)
#define GD_GLOBALTIMER(v) ((v) = 0)
#endif
