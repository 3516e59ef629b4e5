import { flattenValidationErrors } from './validation.pipe';

describe('flattenValidationErrors', () => {
  it("names nested fields by their JSON path and joins each field's messages", () => {
    expect(
      flattenValidationErrors([
        {
          property: 'name',
          constraints: { isString: 'name must be a string', isNotEmpty: 'name should not be empty' },
        },
        {
          property: 'details',
          children: [{ property: 'foo', constraints: { isString: 'foo must be a string' } }],
        },
        {
          property: 'items',
          children: [{ property: '2', children: [{ property: 'code', constraints: { matches: 'code is invalid' } }] }],
        },
      ]),
    ).toEqual([
      { field: 'name', message: 'name must be a string; name should not be empty' },
      { field: 'details.foo', message: 'foo must be a string' },
      { field: 'items[2].code', message: 'code is invalid' },
    ]);
  });
});
