/* Nothing to declare: the module exists for its `requires avx512f` (see module.modulemap). */
