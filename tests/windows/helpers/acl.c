/* A file's DACL in SDDL, for the Windows suite: `acl get FILE` prints it; `acl set FILE SDDL`
 * sets it, protected from the folder's entries when SDDL starts with "D:P", else also taking
 * them; `acl sid` prints the user's SID. Built with mingw by the Windows suite. */
#include <stdio.h>
#include <string.h>
#include <windows.h>
#include <sddl.h>
#include <aclapi.h>

static int fail(const char *what) {
    fprintf(stderr, "%s failed: %lu\n", what, GetLastError());
    return 1;
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "sid")) {
        HANDLE token;
        char buf[256];
        DWORD n;
        LPSTR sid;
        if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return fail("OpenProcessToken");
        if (!GetTokenInformation(token, TokenUser, buf, sizeof buf, &n)) return fail("GetTokenInformation");
        if (!ConvertSidToStringSidA(((TOKEN_USER *)buf)->User.Sid, &sid)) return fail("ConvertSidToStringSid");
        printf("%s\n", sid);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "get")) {
        DWORD n = 0;
        GetFileSecurityA(argv[2], DACL_SECURITY_INFORMATION, NULL, 0, &n);
        PSECURITY_DESCRIPTOR sd = LocalAlloc(0, n);
        LPSTR text;
        if (!GetFileSecurityA(argv[2], DACL_SECURITY_INFORMATION, sd, n, &n)) return fail("GetFileSecurity");
        if (!ConvertSecurityDescriptorToStringSecurityDescriptorA(sd, SDDL_REVISION_1, DACL_SECURITY_INFORMATION,
                                                                  &text, NULL))
            return fail("ConvertSecurityDescriptorToStringSecurityDescriptor");
        printf("%s\n", text);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "set")) {
        PSECURITY_DESCRIPTOR sd;
        BOOL present, defaulted;
        PACL dacl;
        SECURITY_INFORMATION what = DACL_SECURITY_INFORMATION;
        what |= strncmp(argv[3], "D:P", 3) ? UNPROTECTED_DACL_SECURITY_INFORMATION : PROTECTED_DACL_SECURITY_INFORMATION;
        if (!ConvertStringSecurityDescriptorToSecurityDescriptorA(argv[3], SDDL_REVISION_1, &sd, NULL))
            return fail("ConvertStringSecurityDescriptorToSecurityDescriptor");
        if (!GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted)) return fail("GetSecurityDescriptorDacl");
        DWORD e = SetNamedSecurityInfoA(argv[2], SE_FILE_OBJECT, what, NULL, NULL, dacl, NULL);
        if (e) {
            fprintf(stderr, "SetNamedSecurityInfo failed: %lu\n", e);
            return 1;
        }
        return 0;
    }
    fprintf(stderr, "usage: acl get FILE | acl set FILE SDDL | acl sid\n");
    return 2;
}
