{
  # One small addon: row-major (batched) sgemm on Float32Array memory through OpenBLAS's CBLAS.
  # Plain N-API from node_api.h (shipped with Node's headers) instead of node-addon-api: four entry
  # points do not justify a build-time npm dependency.
  "targets": [
    {
      "target_name": "autoui_blas",
      "sources": ["blas.cc"],
      "cflags_cc": ["-O2", "-std=c++17"],
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
          "xcode_settings": { "OTHER_CPLUSPLUSFLAGS": ["-std=c++17", "-O2"] },
          "libraries": ["-L/opt/homebrew/opt/openblas/lib", "-L/usr/local/opt/openblas/lib"]
        }]
      ]
    }
  ]
}
