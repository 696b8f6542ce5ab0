/* SPDX-License-Identifier: MIT */
/* The header's version macros equal configure's PACKAGE_VERSION. */
#include "tap.h"
#include <cuxfer.h>

int main(void)
{
    char buf[64];
    plan(6);
    is_string(CONFIGURE_VERSION, CUXFER_VERSION_STRING,
              "CUXFER_VERSION_STRING equals configure's version");
    is_int(CONFIGURE_MAJOR, CUXFER_VERSION_MAJOR, "major");
    is_int(CONFIGURE_MINOR, CUXFER_VERSION_MINOR, "minor");
    is_int(CONFIGURE_PATCH, CUXFER_VERSION_PATCH, "patch");
    is_int(CONFIGURE_MAJOR * 10000 + CONFIGURE_MINOR * 100 + CONFIGURE_PATCH,
           CUXFER_VERSION_NUMBER, "CUXFER_VERSION_NUMBER");
    snprintf(buf, sizeof buf, "%d.%d.%d", CUXFER_VERSION_MAJOR,
             CUXFER_VERSION_MINOR, CUXFER_VERSION_PATCH);
    is_string(CUXFER_VERSION_STRING, buf, "string agrees with the parts");
    done_testing();
}
