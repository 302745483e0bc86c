# ROUTESCOPE_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer on every C++ target.
if(ROUTESCOPE_SANITIZE)
    set(_rs_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_rs_san}>")
    add_link_options(-fsanitize=address,undefined)
    message(STATUS "Routescope: AddressSanitizer + UndefinedBehaviorSanitizer enabled")
endif()
