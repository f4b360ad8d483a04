// The one source of ptxb_test_pch (cmake/warnings.cmake), which exists to build
// the test binaries' precompiled header. An executable, because the header
// must be built as position-independent as theirs (-fPIE, not a library's
// -fPIC), or clang refuses it.
int main() { return 0; }
