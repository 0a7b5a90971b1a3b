/* A stand-in for Windows' bcryptprimitives.dll, which Wine 8 lacks: Rust's standard library takes
 * its random numbers from ProcessPrng there (Windows 10 and later). This forwards to
 * RtlGenRandom (advapi32's SystemFunction036), which Wine has. Only for the Wine test prefix
 * (scripts/windows-build); never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, n)) return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
