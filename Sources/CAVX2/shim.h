/* Nothing to declare: the module exists for its `requires avx2` (see module.modulemap). */
