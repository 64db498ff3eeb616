/** Types that several resources share. */
export {};
