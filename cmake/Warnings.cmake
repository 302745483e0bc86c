# Warnings on for the project's own C++ (not for CUDA device code or third-party headers).
add_library(routescope_warnings INTERFACE)
target_compile_options(routescope_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough>)
