cmd_Release/obj.target/autoui_blas/blas.o := g++ -o Release/obj.target/autoui_blas/blas.o ../blas.cc '-DNODE_GYP_MODULE_NAME=autoui_blas' '-DUSING_UV_SHARED=1' '-DUSING_V8_SHARED=1' '-DV8_DEPRECATION_WARNINGS=1' '-D_GLIBCXX_USE_CXX11_ABI=1' '-D_FILE_OFFSET_BITS=64' '-D_LARGEFILE_SOURCE' '-D__STDC_FORMAT_MACROS' '-DOPENSSL_NO_PINSHARED' '-DOPENSSL_THREADS' '-DNAPI_VERSION=8' '-DBUILDING_NODE_EXTENSION' -I/usr/include/node -I/usr/src -I/usr/deps/openssl/config -I/usr/deps/openssl/openssl/include -I/usr/deps/uv/include -I/usr/deps/zlib -I/usr/deps/v8/include -I/usr/include/x86_64-linux-gnu/openblas-pthread -I/usr/include/aarch64-linux-gnu/openblas-pthread -I/usr/include/openblas -I/usr/local/include/openblas -I/opt/homebrew/opt/openblas/include -I/usr/local/opt/openblas/include  -fPIC -pthread -Wall -Wextra -Wno-unused-parameter -m64 -O3 -fno-omit-frame-pointer -fno-rtti -fno-exceptions -std=gnu++17 -O2 -std=c++17 -MMD -MF ./Release/.deps/Release/obj.target/autoui_blas/blas.o.d.raw   -c
Release/obj.target/autoui_blas/blas.o: ../blas.cc \
 /usr/include/node/node_api.h /usr/include/node/js_native_api.h \
 /usr/include/node/js_native_api_types.h \
 /usr/include/node/node_api_types.h \
 /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h \
 /usr/include/x86_64-linux-gnu/openblas-pthread/openblas_config.h
../blas.cc:
/usr/include/node/node_api.h:
/usr/include/node/js_native_api.h:
/usr/include/node/js_native_api_types.h:
/usr/include/node/node_api_types.h:
/usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h:
/usr/include/x86_64-linux-gnu/openblas-pthread/openblas_config.h:
