/* raw_launch: the host cost of cuLaunchKernel called from C, the floor that
   bench_speed.py compares the Python launchers with.

       raw_launch PTX_FILE ENTRY BURST BURSTS

   Loads PTX_FILE (gpujit's PTX of _kernels.store, compiled for
   (float32[::1], float32)), then BURSTS times: BURST back-to-back launches
   of ENTRY on 1 block of 32 threads, timed (CLOCK_MONOTONIC), then one
   cuCtxSynchronize, not timed; it prints each burst's host microseconds
   per launch on a line of its own.  A warm-up burst comes first.  Last, it
   checks that the kernel stored its argument (out[0] == 1.0f).

   The parameters are those of gpujit's kernel ABI for that signature
   (docs/internals/launch.md, "Kernel ABI"): the array's data pointer, its extent
   and its stride in bytes (int64 each), then the float32; bench_speed.py
   checks the PTX's parameter list before running this.

   The driver is opened with dlopen("libcuda.so.1") (no link against a stub
   library); cuda.h gives the prototypes, so each pointer has the type of the
   function it holds.  Errors print the driver's name for them and exit 1.

   Built by bench_speed.py into a temporary directory:
       cc -O2 -std=c11 -I<cuda>/include raw_launch.c -ldl
*/
#define _POSIX_C_SOURCE 200809L

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The driver functions used, each resolved once by dlsym.  cuda.h maps some
   names to versioned ones (cuMemAlloc -> cuMemAlloc_v2): NAME() expands the
   macro before quoting, so the versioned symbol is the one looked up. */
#define DRIVER_FUNCTIONS(X) \
    X(cuInit)                    \
    X(cuDeviceGet)               \
    X(cuDevicePrimaryCtxRetain)  \
    X(cuCtxSetCurrent)           \
    X(cuCtxSynchronize)          \
    X(cuModuleLoadData)          \
    X(cuModuleGetFunction)       \
    X(cuMemAlloc)                \
    X(cuMemcpyDtoH)              \
    X(cuLaunchKernel)            \
    X(cuGetErrorName)

#define QUOTE(s) #s
#define NAME(f) QUOTE(f)

typedef struct Driver {
#define FIELD(f) __typeof__(f) *f;
    DRIVER_FUNCTIONS(FIELD)
#undef FIELD
} Driver;

/* CU(call): calls d->call (d: the Driver in scope); on an error, prints what
   failed and returns 1 from the caller. */
#define CU(call)                                                              \
    do {                                                                      \
        CUresult status_ = (d->call);                                         \
        if (status_ != CUDA_SUCCESS) {                                        \
            const char *name_ = "unknown error";                              \
            d->cuGetErrorName(status_, &name_);                               \
            fprintf(stderr, "raw_launch: %s failed: %s\n", #call, name_);     \
            return 1;                                                         \
        }                                                                     \
    } while (0)

static int load_driver(Driver *d)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "raw_launch: %s\n", dlerror());
        return 1;
    }
#define RESOLVE(f)                                                            \
    *(void **)&d->f = dlsym(lib, NAME(f));                                    \
    if (!d->f) {                                                              \
        fprintf(stderr, "raw_launch: libcuda.so.1 has no %s\n", NAME(f));     \
        return 1;                                                             \
    }
    DRIVER_FUNCTIONS(RESOLVE)
#undef RESOLVE
    return 0;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (text && fread(text, 1, (size_t)size, f) == (size_t)size) {
        text[size] = '\0';
    } else {
        free(text);
        text = NULL;
    }
    fclose(f);
    return text;
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The loop being measured: `burst` launches of f, timed (*us: per launch),
   then one synchronize, not timed. */
static int launch_burst(Driver *d, CUfunction f, void **params, long burst, double *us)
{
    double t0 = seconds();
    for (long i = 0; i < burst; i++)
        CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    *us = (seconds() - t0) / (double)burst * 1e6;
    CU(cuCtxSynchronize());
    return 0;
}

static int run(Driver *d, const char *ptx, const char *entry, long burst, long bursts)
{
    CUdevice device;
    CUcontext context;
    CUmodule module;
    CUfunction f;
    CUdeviceptr out;
    CU(cuInit(0));
    CU(cuDeviceGet(&device, 0));
    CU(cuDevicePrimaryCtxRetain(&context, device));
    CU(cuCtxSetCurrent(context));
    CU(cuModuleLoadData(&module, ptx));
    CU(cuModuleGetFunction(&f, module, entry));
    CU(cuMemAlloc(&out, sizeof(float)));

    long long extent = 1, stride = sizeof(float);
    float x = 1.0f;
    void *params[] = {&out, &extent, &stride, &x};
    double us;
    if (launch_burst(d, f, params, burst, &us))   /* warm-up */
        return 1;
    for (long r = 0; r < bursts; r++) {
        if (launch_burst(d, f, params, burst, &us))
            return 1;
        printf("%.4f\n", us);
    }

    float stored = 0.0f;
    CU(cuMemcpyDtoH(&stored, out, sizeof stored));
    if (stored != x) {
        fprintf(stderr, "raw_launch: the kernel stored %g, not %g\n", stored, x);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: raw_launch PTX_FILE ENTRY BURST BURSTS\n");
        return 2;
    }
    long burst = strtol(argv[3], NULL, 10), bursts = strtol(argv[4], NULL, 10);
    char *ptx = read_file(argv[1]);
    if (!ptx) {
        fprintf(stderr, "raw_launch: cannot read %s\n", argv[1]);
        return 1;
    }
    Driver driver;
    int status = load_driver(&driver) || run(&driver, ptx, argv[2], burst, bursts);
    free(ptx);
    return status;
}
