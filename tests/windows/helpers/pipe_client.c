/* A bridge client that is not tether: opens the named pipe argv[1], writes argv[2] and a newline,
 * then reads until the server hangs up, and prints how many bytes came back. Built with mingw by
 * the Wine suite, run under Wine. */
#include <stdio.h>
#include <string.h>
#include <windows.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: pipe_client PIPE LINE\n");
        return 2;
    }
    HANDLE pipe = CreateFileA(argv[1], GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0, NULL);
    if (pipe == INVALID_HANDLE_VALUE) {
        fprintf(stderr, "open failed: %lu\n", GetLastError());
        return 1;
    }
    DWORD n = 0;
    char line[4096];
    snprintf(line, sizeof line, "%s\n", argv[2]);
    if (!WriteFile(pipe, line, (DWORD)strlen(line), &n, NULL)) {
        fprintf(stderr, "write failed: %lu\n", GetLastError());
        return 1;
    }
    unsigned long total = 0;
    char buf[4096];
    while (ReadFile(pipe, buf, sizeof buf, &n, NULL) && n > 0) total += n;
    printf("read %lu bytes\n", total);
    return 0;
}
