/** The version of this package, as in package.json (a test checks they agree). */
export const VERSION = '0.1.0';
