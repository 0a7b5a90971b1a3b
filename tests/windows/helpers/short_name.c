/* Prints the 8.3 short name Windows gives the existing path argv[1] (GetShortPathNameA). Built
 * with mingw by the Windows suite. */
#include <stdio.h>
#include <windows.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: short_name PATH\n");
        return 2;
    }
    char out[MAX_PATH];
    DWORD n = GetShortPathNameA(argv[1], out, sizeof out);
    if (n == 0 || n >= sizeof out) {
        fprintf(stderr, "GetShortPathName failed: %lu\n", GetLastError());
        return 1;
    }
    printf("%s\n", out);
    return 0;
}
