/** The part of jStat (MIT, ships no types) the trend judgement uses: Student's t and the normal distribution. */
declare module 'jstat' {
  const jStat: {
    studentt: {
      cdf(x: number, dof: number): number;
      inv(p: number, dof: number): number;
    };
    normal: {
      cdf(x: number, mean: number, std: number): number;
    };
  };
  export default jStat;
}
