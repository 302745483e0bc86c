# ROUTESCOPE_FUZZ: libFuzzer targets for every reader (fuzz/, docs/reliability.md). Needs clang
# (Debian's clang 14 with libfuzzer-14-dev). Every C++ target is built with libFuzzer's coverage
# instrumentation plus AddressSanitizer and UndefinedBehaviorSanitizer; the fuzz executables link
# libFuzzer's driver. Configure a separate tree (scripts/fuzz.sh makes build-fuzz/):
#   cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
#         -DROUTESCOPE_FUZZ=ON -DROUTESCOPE_GUI=OFF -DROUTESCOPE_TESTS=OFF -DROUTESCOPE_CUDA=OFF
if(ROUTESCOPE_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
        message(FATAL_ERROR "ROUTESCOPE_FUZZ needs clang (-DCMAKE_CXX_COMPILER=clang++)")
    endif()
    if(ROUTESCOPE_SANITIZE)
        message(FATAL_ERROR "ROUTESCOPE_FUZZ already turns the sanitizers on; leave ROUTESCOPE_SANITIZE off")
    endif()
    # -O1 with assert() on (a Debug tree): fast to build, and assertions are findings too.
    set(_rs_fuzz_flags -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
        -fno-omit-frame-pointer -g -O1)
    add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_rs_fuzz_flags}>" "$<$<COMPILE_LANGUAGE:C>:${_rs_fuzz_flags}>")
    add_link_options(-fsanitize=address,undefined)
    message(STATUS "Routescope: libFuzzer targets (fuzz/) with AddressSanitizer + UndefinedBehaviorSanitizer")
endif()
