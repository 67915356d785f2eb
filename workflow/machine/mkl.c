/* MKL, which runs PyTorch's linear layers on x86-64 CPUs, picks its code by CPU vendor: on an
 * Intel CPU its Intel kernels, on an AMD one its Zen kernels, which round differently under
 * every instruction-set cap and MKL_CBWR setting (reference/cross-checks/cpu-intel-amx-*).
 * Loaded into a job's global symbol scope before torch (workflow/machine/mkl.py), these two
 * answers to MKL's vendor queries take precedence over MKL's own, so MKL runs its Zen kernels
 * on any x86-64 CPU with AVX2: the code the reference's AMD machines ran. On an AMD Zen CPU MKL
 * gets the answers it would anyway. Each answer is counted, so that the job can tell that MKL
 * asked these functions and not its own. */

static int asked;

int mkl_serv_intel_cpu_true(void) {
    __atomic_add_fetch(&asked, 1, __ATOMIC_RELAXED);
    return 0;
}

int mkl_serv_cpuiszen(void) {
    __atomic_add_fetch(&asked, 1, __ATOMIC_RELAXED);
    return 1;
}

int histres_mkl_asked(void) { return __atomic_load_n(&asked, __ATOMIC_RELAXED); }
