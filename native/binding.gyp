{
  # Two small addons: OpenBLAS GEMMs and the fused training kernels on Float32Array memory
  # (autoui_blas), and the built-in screen encoder (autoui_pixels).
  # Plain N-API from node_api.h (shipped with Node's headers) instead of node-addon-api: flat
  # entry points do not justify a build-time npm dependency.
  "targets": [
    {
      "target_name": "autoui_blas",
      "sources": ["addon.cc", "napi_args.cc", "pool.cc", "gemm.cc", "mathfun.cc", "elementwise.cc", "feed_forward.cc", "attention.cc", "attention_layer.cc", "losses.cc", "broadcast.cc"],
      # -O3 for the vectoriser; no -ffast-math (it would reorder sums and change results between
      # builds) and no -march (the build must run on any CPU of its architecture: hot loops carry
      # AVX2 clones instead, see mathfun.h); no FMA contraction, so every clone gives the same bits;
      # -fno-trapping-math lets branch-free selects vectorise (no code reads FP exception flags).
      "cflags_cc": ["-O3", "-std=c++17", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off"],
      # Debian puts OpenBLAS's own cblas.h (with openblas_set_num_threads) under openblas-pthread;
      # other distros use /usr/include/openblas. Missing directories are ignored by the compiler.
      "include_dirs": [
        "/usr/include/x86_64-linux-gnu/openblas-pthread",
        "/usr/include/aarch64-linux-gnu/openblas-pthread",
        "/usr/include/openblas",
        "/usr/local/include/openblas",
        "/opt/homebrew/opt/openblas/include",
        "/usr/local/opt/openblas/include"
      ],
      "libraries": ["-lopenblas", "-lpthread"],
      "defines": ["NAPI_VERSION=8"],
      "conditions": [
        ["OS=='mac'", {
          "xcode_settings": { "OTHER_CPLUSPLUSFLAGS": ["-std=c++17", "-O3", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off"] },
          "libraries": ["-L/opt/homebrew/opt/openblas/lib", "-L/usr/local/opt/openblas/lib"]
        }]
      ]
    },
    {
      # The built-in screen encoder's feature pass (pixels.cc): no OpenBLAS, no threads. No FMA
      # contraction and no -ffast-math: its sums must round as JavaScript's do.
      "target_name": "autoui_pixels",
      "sources": ["pixels.cc", "napi_args.cc"],
      "cflags_cc": ["-O3", "-std=c++17", "-fno-math-errno", "-ffp-contract=off"],
      "defines": ["NAPI_VERSION=8"],
      "conditions": [
        ["OS=='mac'", { "xcode_settings": { "OTHER_CPLUSPLUSFLAGS": ["-std=c++17", "-O3", "-fno-math-errno", "-ffp-contract=off"] } }]
      ]
    }
  ]
}
