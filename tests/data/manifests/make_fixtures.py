import json, copy, os
# make_fixtures.py — writes the valid/ and invalid/ manifest fixtures (each invalid one is the
# design sketch with one thing wrong).  The .expected files are written by test_manifest with
# ROOFTUNE_WRITE_EXPECTED=1 and read by a person before they are committed.
D=os.path.dirname(os.path.abspath(__file__))
base = {
  "name": "gemm_like", "family": "gemm", "description": "the design sketch's GEMM manifest",
  "source": "kernel.cu", "entry": "kernel",
  "dtypes": ["f16", "bf16"], "archs": ["sm_80", "sm_90"],
  "params": {"BLOCK_M": [64, 128, 256], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64],
             "WARPS_M": [1, 2, 4], "WARPS_N": [1, 2, 4], "STAGES": [2, 3, 4], "SPLIT_K": [1, 2, 4]},
  "derived": {"THREADS": "WARPS_M*WARPS_N*32",
              "SMEM": "STAGES*(BLOCK_M+BLOCK_N)*BLOCK_K*dtype_bytes"},
  "constraints": ["BLOCK_M % (WARPS_M*16) == 0", "BLOCK_N % (WARPS_N*16) == 0",
                  "SMEM <= device.smem_per_block_optin", "THREADS <= device.max_threads_per_block",
                  "K % (SPLIT_K*BLOCK_K) == 0"],
  "launch": {"grid": ["ceil_div(N,BLOCK_N)", "ceil_div(M,BLOCK_M)", "SPLIT_K"],
             "block": ["THREADS", 1, 1], "smem": "SMEM"},
  "cost": {"flops": "2*M*N*K",
           "dram_bytes": "dtype_bytes*(M*K*ceil_div(N,BLOCK_N) + K*N*ceil_div(M,BLOCK_M)) + 4*M*N"}
}
def w(sub, name, obj, raw=None):
    with open(os.path.join(D, sub, name + '.json'), 'w') as f:
        f.write(raw if raw is not None else json.dumps(obj, indent=2) + '\n')
def mod(**kw):
    m = copy.deepcopy(base)
    for k, v in kw.items():
        if v is None: m.pop(k, None)
        else: m[k] = v
    return m
# ---- valid
w('valid', 'gemm_like', base)
idents = mod(name="idents", params={"LAYOUT_A": ["row", "col"], "LAYOUT_B": ["col", "row"],
        "VEC": [1, 2, 4, 8], "TILE": [16, 32, 64]},
        derived={"LOADS": "TILE / VEC", "COLS": "LAYOUT_B == col ? TILE : VEC"},
        roles={"TILE": "tile_m", "VEC": "vector"},
        constraints=["LAYOUT_A == row || VEC <= 2", "col != LAYOUT_B || LOADS >= 8", "COLS % 2 == 0"],
        launch={"grid": ["ceil_div(M, TILE)", 1, 1], "block": ["TILE*2", 1, 1]},
        instruction="simt", options=["-use_fast_math"],
        cost={"flops": "2*M*N*K", "dram_bytes": "dtype_bytes*(M*K + K*N) + 4*M*N"})
w('valid', 'idents', idents)
chain = mod(name="chain", params={"A": [1, 2, 3, 4, 5, 6], "B": [0, 1, 2, 3], "C": [-2, -1, 0, 1, 2], "D": [7, 8, 9]},
        derived={"AB": "A*B", "ABC": "AB + C", "TOTAL": "ABC * D + M"},
        constraints=["K % 8 == 0", "D != 8", "ABC > 0 && TOTAL % 3 != 0", "min(A, D) < max(B, 2)", "C == 0 || B / abs(C) >= 1"],
        launch={"grid": ["max(1, ABC)", 1, 1], "block": [32, 1, 1]},
        cost={"flops": "TOTAL", "dram_bytes": 0})
w('valid', 'chain', chain)
free = mod(name="full", params={"X": [1, 2, 3], "Y": [10, 20], "Z": ["a", "b", "c"]}, derived=None, constraints=None,
        launch={"grid": [1, 1, 1], "block": ["X", "Y", 1]}, cost={"flops": "X*Y", "dram_bytes": "Z"})
w('valid', 'full', free)
late = mod(name="late", params={"P": [1, 2, 4, 8, 16, 32], "Q": [1, 3, 5], "R": [2, 4, 8, 16, 32, 64]},
        derived={"PR": "P * R"},
        constraints=["P >= 2", "PR <= 256", "is_pow2(PR) && log2(PR) % 2 == 0", "(P + Q) % 2 == 1 || R > 8"],
        launch={"grid": [1, 1, 1], "block": ["PR", 1, 1]}, cost={"flops": 1, "dram_bytes": 1})
w('valid', 'late', late)
# ---- invalid
w('invalid', 'syntax', None, raw='{\n  "name": "x",\n  "family": "gemm",\n}\n')
w('invalid', 'dup_key', None, raw='{"name": "x", "name": "y"}\n')
w('invalid', 'not_object', [1, 2])
w('invalid', 'unknown_field', mod(blocks=3))
w('invalid', 'missing_name', mod(name=None))
w('invalid', 'bad_entry', mod(entry="my-kernel"))
p = copy.deepcopy(base["params"]); p["LAYOUT"] = ["row", "col-major"]
w('invalid', 'bad_ident_value', mod(params=p))
p = copy.deepcopy(base["params"]); p["BLOCK_K"] = [32, "x"]
w('invalid', 'mixed_values', mod(params=p))
p = copy.deepcopy(base["params"]); p["BLOCK_K"] = [32, 1.5]
w('invalid', 'float_value', mod(params=p))
p = copy.deepcopy(base["params"]); p["STAGES"] = [2, 3, 2]
w('invalid', 'dup_value', mod(params=p))
p = copy.deepcopy(base["params"]); p["STAGES"] = []
w('invalid', 'empty_domain', mod(params=p))
p = copy.deepcopy(base["params"]); p["RT_X"] = [1]
w('invalid', 'reserved_name', mod(params=p))
c = list(base["constraints"]); c[1] = "BLOCK_N % (WARPS_N*16 == 0"
w('invalid', 'constraint_syntax', mod(constraints=c))
c = list(base["constraints"]); c[2] = "SMEM <= device.smem_per_block"
w('invalid', 'unknown_device', mod(constraints=c))
c = list(base["constraints"]); c[3] = "THREADS <= 1024 && BLOCK_MM > 0"
w('invalid', 'unknown_name', mod(constraints=c))
w('invalid', 'derived_order', mod(derived={"THREADS": "WARPS * 32", "WARPS": "WARPS_M*WARPS_N", "SMEM": "1"}))
w('invalid', 'derived_self', mod(derived={"THREADS": "THREADS + 1", "SMEM": "1"}))
w('invalid', 'derived_param', mod(derived={"BLOCK_K": "64", "THREADS": "1", "SMEM": "1"}))
w('invalid', 'ident_domain', idents | {"constraints": ["LAYOUT_B == diag"]})
w('invalid', 'ident_ambiguous', idents | {"constraints": ["VEC + col > 1"]})
w('invalid', 'bad_dtype', mod(dtypes=["f16", "fp16"]))
w('invalid', 'bad_arch', mod(archs=["sm_90", "sm90"]))
w('invalid', 'no_archs', mod(archs=[]))
w('invalid', 'missing_source', mod(source="nope.cu"))
w('invalid', 'source_outside', mod(source="../valid/kernel.cu"))
w('invalid', 'launch_grid', mod(launch={"grid": ["1", "2"], "block": ["THREADS", 1, 1]}))
w('invalid', 'launch_field', mod(launch={"grid": [1, 1, 1], "block": ["THREADS", 1, 1], "shared": 0}))
w('invalid', 'launch_type', mod(launch={"grid": [1, 1, 1.5], "block": ["THREADS", 1, 1]}))
w('invalid', 'cost_missing', mod(cost={"flops": "2*M*N*K"}))
w('invalid', 'cost_field', mod(cost=base["cost"] | {"bytes": "1"}))
w('invalid', 'cost_executed', mod(cost=base["cost"] | {"executed_flops": "2*round_up(M,BLOCK_Q)*N*K"}))
w('invalid', 'bad_instruction', mod(instruction="tensor"))
w('invalid', 'bad_role', mod(roles={"BLOCK_M": "tile_x"}))
w('invalid', 'role_param', mod(roles={"BLOCK_Q": "tile_m"}))
w('invalid', 'div_zero', mod(params={"BM": [64, 128], "W": [1, 2]}, derived=None,
    constraints=["BM > 64 || W > 1", "BM / (W - 1) > 1"], launch={"grid": [1, 1, 1], "block": [1, 1, 1]}, cost={"flops": 1, "dram_bytes": 1}))
w('invalid', 'empty_space', mod(constraints=["BLOCK_M * BLOCK_N > 65536"]))
w('invalid', 'env_false', mod(constraints=["BLOCK_M >= 64", "K % 1024 == 0"]))
w('invalid', 'overflow', mod(derived={"THREADS": "WARPS_M*WARPS_N*32", "SMEM": "BLOCK_M * 4611686018427387904"}))
w('invalid', 'unknown_function', mod(constraints=["floor(BLOCK_M) > 1"]))
w('invalid', 'assign', mod(constraints=["BLOCK_M = 64"]))
for sub in ('valid', 'invalid'):
    with open(os.path.join(D, sub, 'kernel.cu'), 'w') as f:
        f.write('// a stand-in template source: the manifest tests only need it to exist\nextern "C" __global__ void kernel() {}\n')
