// SPDX-License-Identifier: BSL-1.0
int main() { return 0; }
