"""tilelang.transform -- PassConfigKey: the names of TileLang's pass configs (every key of TileLang's
tilelang.transform.PassConfigKey, and this project's own), for pass_configs={...}.  Which of them
change code here is libtilelang's to say (tl_pass_config_flag); jit() applies those and accepts every
other TileLang key with one CompileWarning naming it (no effect in this compiler)."""


class PassConfigKey:
    """Pass config keys, as TileLang spells them (the values are the config strings)."""
    CUDA_KERNELS_OUTPUT_DIR = "cuda.kernels_output_dir"
    TIR_ADD_LOWER_PASS = "tir.add_lower_pass"
    TIR_DISABLE_CSE = "tir.disable_cse_tir"
    TIR_DISABLE_STORAGE_REWRITE = "tir.disable_storage_rewrite"
    TIR_DISABLE_VECTORIZE = "tir.disable_vectorize"
    TIR_ENABLE_DEBUG = "tir.enable_debug"
    TIR_ENABLE_EQUIV_TERMS_IN_CSE = "tir.enable_equiv_terms_in_cse_tir"
    TIR_MERGE_STATIC_SMEM = "tir.merge_static_smem"
    TIR_NOALIAS = "tir.noalias"
    TIR_SIMPLIFY = "tir.Simplify"
    TIR_USE_ASYNC_COPY = "tir.use_async_copy"
    TL_AST_PRINT_ENABLE = "tl.ast_print_enable"
    TL_CONFIG_INDEX_BITWIDTH = "tl.config_index_bitwidth"
    TL_DEBUG_MERGE_SHARED_MEMORY_ALLOCATIONS = "tl.debug_merge_shared_memory_allocations"
    TL_DEBUG_THREAD_STORAGE_SYNC_SUMMARY = "tl.debug_thread_storage_sync_summary"
    TL_DEVICE_COMPILE_FLAGS = "tl.device_compile_flags"
    TL_DISABLE_BUFFER_INIT_CHECK = "tl.disable_buffer_init_check"
    TL_DISABLE_DATA_RACE_CHECK = "tl.disable_data_race_check"
    TL_DISABLE_DYNAMIC_TAIL_SPLIT = "tl.disable_dynamic_tail_split"
    TL_DISABLE_FAST_MATH = "tl.disable_fast_math"
    TL_DISABLE_LOOP_UNSWITCHING = "tl.disable_loop_unswitching"
    TL_DISABLE_LOWER_LDGSTG_PREDICATED = "tl.disable_lower_ldgstg_predicated"
    TL_DISABLE_OUT_OF_BOUND_WARNING = "tl.disable_out_of_bound_warning"
    TL_DISABLE_PRELOWER_SEMANTIC_CHECK = "tl.disable_prelower_semantic_check"
    TL_DISABLE_SAFE_MEMORY_ACCESS = "tl.disable_safe_memory_legalize"
    TL_DISABLE_SHARED_MEMORY_REUSE = "tl.disable_shared_memory_reuse"
    TL_DISABLE_SHUFFLE_ELECT = "tl.disable_shuffle_elect"
    TL_DISABLE_THREAD_STORAGE_SYNC = "tl.disable_thread_storage_sync"
    TL_DISABLE_TMA_LOWER = "tl.disable_tma_lower"
    TL_DISABLE_VECTORIZE_256 = "tl.disable_vectorize_256"
    TL_DISABLE_WARP_SPECIALIZED = "tl.disable_warp_specialized"
    TL_DISABLE_WGMMA = "tl.disable_wgmma"
    TL_DUMP_IR_DIR = "tl.dump_ir_path"
    TL_DYNAMIC_ALIGNMENT = "tl.dynamic_alignment"
    TL_EMIT_LINE_DIRECTIVES = "tl.emit_line_directives"
    TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE = "tl.enable_aggressive_shared_memory_merge"
    TL_ENABLE_ASYNC_COPY = "tl.enable_async_copy"
    TL_ENABLE_DUMP_IR = "tl.enable_dump_ir"
    TL_ENABLE_FAST_MATH = "tl.enable_fast_math"
    TL_ENABLE_LOWER_LDGSTG = "tl.enable_lower_ldgstg"
    TL_ENABLE_LOWER_LDGSTG_PREDICATED = "tl.enable_lower_ldgstg_predicated"
    TL_ENABLE_PTXAS_VERBOSE_OUTPUT = "tl.enable_ptxas_verbose_output"
    TL_ENABLE_REDUCER_PLAN_VERBOSE = "tl.enable_reducer_plan_verbose"
    TL_ENABLE_VECTORIZE_PLANNER_VERBOSE = "tl.enable_vectorize_planner_verbose"
    TL_FORCE_LET_INLINE = "tl.force_let_inline"
    TL_IF_STMT_BINDING_INLINE_REPLAYABLE_BINDS = "tl.if_stmt_binding_inline_replayable_binds"
    TL_LAYOUT_COST_MODEL = "tl.layout_cost_model"
    TL_LAYOUT_VISUALIZATION_ENABLE = "tl.layout_visualization_enable"
    TL_LAYOUT_VISUALIZATION_FORMATS = "tl.layout_visualization_formats"
    TL_LOOP_UNSWITCHING_ALLOW_NON_TRIVIAL_ELSE = "tl.loop_unswitching_allow_non_trivial_else"
    TL_PASS_PROFILE = "tl.pass_profile"
    TL_PASS_PROFILE_THRESHOLD_MS = "tl.pass_profile_threshold_ms"
    TL_PTXAS_REGISTER_USAGE_LEVEL = "tl.ptxas_register_usage_level"
    TL_REDUCER_FORCE_BASELINE = "tl.reducer_force_baseline"
    TL_SIMPLIFY = "tl.Simplify"
    TL_SIMPLIFY_APPLY_CONSTRAINTS_TO_BOOLEAN_BRANCHES = "apply_constraints_to_boolean_branches"
    TL_SIMPLIFY_CONVERT_BOOLEAN_TO_AND_OF_ORS = "convert_boolean_to_and_of_ors"
    TL_SIMPLIFY_ENABLE_LET_INLINE = "enable_simplify_let_inline"
    TL_SIMPLIFY_PROPAGATE_KNOWNS_TO_PROVE_CONDITIONAL = "propagate_knowns_to_prove_conditional"
    TL_SIMPLIFY_PROPAGATE_KNOWNS_TO_SIMPLIFY_EXPRESSIONS = "propagate_knowns_to_simplify_expressions"
    TL_SIMPLIFY_TRANSITIVELY_PROVE_INEQUALITIES = "transitively_prove_inequalities"
    TL_STORAGE_REWRITE_DETECT_INPLACE = "tl.storage_rewrite_detect_inplace"
    # this project's (libtilelang's table; jit.py)
    TL_ENABLE_STREAM_K = "tl.enable_stream_k"
    TL_DISABLE_TMA_STORE = "tl.disable_tma_store"
    TL_ATTENTION_PINGPONG = "tl.attention_pingpong"
    TL_ATTENTION_OVERLAP = "tl.attention_overlap"
    TL_ATTENTION_PERSISTENT = "tl.attention_persistent"


# the TIR_* keys as later TileLang releases spell them (tirx.*)
_LATER_SPELLINGS = (
    'tirx.disable_cse_tir', 'tirx.Simplify', 'tirx.disable_storage_rewrite', 'tirx.disable_vectorize',
    'tirx.use_async_copy', 'tirx.enable_debug', 'tirx.merge_static_smem', 'tirx.add_lower_pass',
    'tirx.noalias')


def tilelang_keys():
    """Every config string PassConfigKey names (and the later tirx.* spellings of its TIR_* keys)."""
    return {v for k, v in vars(PassConfigKey).items() if k.isupper()} | set(_LATER_SPELLINGS)


def simplify_prim_func(func):
    """TileLang's TIR simplifier, applied to a prim_func: this compiler simplifies while it lowers, so the
    function is returned as it is."""
    return func
