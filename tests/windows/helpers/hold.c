/* Holds the file argv[1] open the way a program that forbids deleting or renaming it does (share
 * mode FILE_SHARE_READ only, so no FILE_SHARE_DELETE), prints "held", and lets go after argv[2]
 * milliseconds. Built with mingw by the Windows suite. */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: hold FILE MILLISECONDS\n");
        return 2;
    }
    HANDLE f = CreateFileA(argv[1], GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, 0, NULL);
    if (f == INVALID_HANDLE_VALUE) {
        fprintf(stderr, "open failed: %lu\n", GetLastError());
        return 1;
    }
    printf("held\n");
    fflush(stdout);
    Sleep((DWORD)atoi(argv[2]));
    CloseHandle(f);
    return 0;
}
