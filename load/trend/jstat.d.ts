/** The part of jStat (MIT, ships no types) the trend judgement uses: Student's t distribution. */
declare module 'jstat' {
  const jStat: {
    studentt: {
      cdf(x: number, dof: number): number;
      inv(p: number, dof: number): number;
    };
  };
  export default jStat;
}
