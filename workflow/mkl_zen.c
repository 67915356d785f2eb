/* MKL, which runs PyTorch's linear layers on x86-64 CPUs, picks its code by CPU vendor: on an
 * Intel CPU its Intel kernels, on an AMD one its Zen kernels, which round differently under
 * every instruction-set cap and MKL_CBWR setting (reference/cross-checks/cpu-intel-amx-*).
 * Preloaded into a job (workflow/mkl.py), these two answers to MKL's vendor queries take
 * precedence over MKL's own, so MKL runs its Zen kernels on any x86-64 CPU with AVX2: the code
 * the reference's AMD machines ran. On an AMD Zen CPU MKL gets the answers it would anyway. */

int mkl_serv_intel_cpu_true(void) { return 0; }

int mkl_serv_cpuiszen(void) { return 1; }
