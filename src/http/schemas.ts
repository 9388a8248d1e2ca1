// Small schemas shared by several routes.
import Type from 'typebox';

export const Uuid = Type.String({ format: 'uuid', description: 'UUID' });
